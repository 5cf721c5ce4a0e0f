/**
 * Context files: the Markdown a person or a repository leaves for the agent, found at every
 * level and read with the file tools' confinement (`readWorkspaceText`: regular files only,
 * no symlink out of their root, one hard link), and, for the project's files, only what the
 * model could read with its own tools (`ReadRefusal`: not a path the person's deny rules hide,
 * nor a secret location of the home folder or tern's home, by where a link leads too).
 *
 * - `AGENTS.md` and `CLAUDE.md` (both, in that order; a `CLAUDE.md` identical to the
 *   `AGENTS.md` beside it is left out) at the user level (tern's home), then in every folder
 *   from the repository root (the nearest folder above the workspace that has `.git`) down to
 *   the workspace; without a repository, in the workspace only. The home folder's own files
 *   (`~/AGENTS.md`) count only when the home folder is one of those folders: the user level is
 *   tern's home. User-level files are confined to tern's home, the workspace's own (and nested)
 *   files to the workspace, and those of a folder above it (up to the repository root) to that
 *   folder itself: a link there may lead only to a file beside it (`CLAUDE.md -> AGENTS.md`),
 *   never into another folder (the sandbox shows commands nothing above the workspace).
 * - Nested files, in folders below the workspace, join when a tool first touches the folder
 *   ({@linkcode nestedContextFiles}); the harness appends them to that tool's result, so the
 *   system prompt, and the provider's prompt cache of it, stays as it was. A link there may lead
 *   only to a Markdown file (`CLAUDE.md -> ../docs/pkg.md`), never to `.env`.
 * - `SYSTEM.md` replaces the default instructions and `APPEND_SYSTEM.md` is appended, at the
 *   user level (tern's home) and the project level (`<workspace>/.tern/`); a project's
 *   `SYSTEM.md` wins over the person's.
 *
 * Each file is cut at {@linkcode MAX_CONTEXT_FILE_CHARS} with a note to the model, and the
 * context files together at {@linkcode MAX_CONTEXT_TOTAL_CHARS}: the files past it are left out
 * with a note naming them.
 */
import { basename, dirname, join, relative, resolve, sep } from "../core/path.ts";
import { type ReadRefusal, readWorkspaceText, type Warn } from "../config/workspace_file.ts";
import { lstatOrNull, realPathOrNull } from "../core/verified_open.ts";
import type { HeaderOwner } from "./frontmatter.ts";

/** The context file names, read in this order in each folder. */
export const CONTEXT_FILE_NAMES = ["AGENTS.md", "CLAUDE.md"] as const;
/** Longest context file taken whole, in characters; a longer one is cut with a note. */
export const MAX_CONTEXT_FILE_CHARS = 32_000;
/** The most characters of context files in one system prompt. */
export const MAX_CONTEXT_TOTAL_CHARS = 96_000;
/**
 * How many folders below the workspace nested context files are looked for in: far deeper than
 * any project keeps them. Each file is checked along its whole path, so a repository's chain of
 * 1,000 empty folders held tern's thread 38 s at a tool's first touch of a file at its end.
 */
export const MAX_NESTED_CONTEXT_DEPTH = 64;
/** Folder names under which nested context files are never looked for. */
const SKIPPED_FOLDERS = new Set(["node_modules", ".git"]);

/** Where a resource was found. */
export type ResourceLevel = "user" | "project" | "nested";

/** One file read into the prompt. */
export interface ContextFile {
  /** Absolute path, as found (not the real path). */
  path: string;
  level: ResourceLevel;
  /** The text as it goes to the model: cut, with a note, when the file is longer. */
  text: string;
  /** True when the file was cut or left out at a cap. */
  cut: boolean;
}

/** The files that shape the system prompt. */
export interface PromptFiles {
  /** `SYSTEM.md` that replaces the default instructions (the project's over the person's). */
  system?: ContextFile;
  /** `APPEND_SYSTEM.md` files: the person's, then the project's. */
  append: ContextFile[];
  /** Context files, user level first, then from the repository root down to the workspace. */
  context: ContextFile[];
  /** The repository root the project files were confined to; undefined without one. */
  repositoryRoot?: string;
}

/** Where to look and whom to tell about a refused file. */
export interface PromptFilesOptions {
  /** Absolute real path of the workspace. */
  workspace: string;
  /** tern's home (`TERN_HOME` or `~/.tern`). */
  ternHome: string;
  warn?: Warn;
  /** What the model may not read (the project's files only: the person's are their own). */
  refuse: ReadRefusal;
  /**
   * False: the person's own files in tern's home (`SYSTEM.md`, `APPEND_SYSTEM.md`, context
   * files) are not read, for a model server the person did not choose. Default true.
   */
  personal?: boolean;
}

/**
 * The nearest folder at or above `workspace` that holds `.git` (a folder, or a file for a
 * worktree); undefined when there is none. One `lstat` per folder up to the file-system root.
 * An empty `.git` folder is no repository: it is what the sandbox leaves as a mount point while
 * it keeps commands from making one (or after a `kill -9`), and counting it would hide the real
 * repository root's context files. Above the workspace, a folder that another user (not root)
 * owns, or whose `.git` they own, is no repository either (`warn` is told), as git's
 * `safe.directory` check says: anyone may plant `/tmp/.git` and `/tmp/AGENTS.md`.
 */
export function repositoryRoot(workspace: string, warn?: Warn): string | undefined {
  const inside = resolve(workspace);
  for (let dir = inside;; dir = dirname(dir)) {
    const git = join(dir, ".git");
    const info = lstatOrNull(git);
    if (info !== null && !(info.isDirectory && isEmptyFolder(git))) {
      const owner = dir === inside ? undefined : foreignOwner(info, lstatOrNull(dir));
      if (owner === undefined) return dir;
      warn?.(
        `Not reading context files above the workspace: the repository at "${dir}" belongs to ` +
          `another user (uid ${owner})`,
      );
      return undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The uid of another user (not root) who owns one of `infos`; undefined when none does. */
function foreignOwner(...infos: (Deno.FileInfo | null)[]): number | undefined {
  const uid = Deno.uid();
  if (uid === null) return undefined;
  return infos.map((info) => info?.uid ?? uid).find((owner) => owner !== uid && owner !== 0);
}

function isEmptyFolder(path: string): boolean {
  try {
    for (const _ of Deno.readDirSync(path)) return false;
    return true;
  } catch {
    return false;
  }
}

/** The folders whose context files are read: the repository root down to the workspace. */
export function contextFolders(workspace: string, root: string | undefined): string[] {
  const folders = [resolve(workspace)];
  if (root === undefined) return folders;
  for (let dir = folders[0]; dir !== root && dirname(dir) !== dir;) {
    dir = dirname(dir);
    folders.unshift(dir);
  }
  return folders;
}

/** Reads the `SYSTEM.md`, `APPEND_SYSTEM.md` and context files of `workspace`. */
export function readPromptFiles(options: PromptFilesOptions): PromptFiles {
  const { workspace, ternHome, warn, refuse } = options;
  const personal = options.personal ?? true;
  const root = repositoryRoot(workspace, warn);
  const projectDir = join(workspace, ".tern");
  const read = (confine: string, path: string, level: ResourceLevel) => {
    if (level === "user" && !personal) return undefined;
    const refused = refuseFor(level, refuse);
    return readContextFile(confine, path, level, warn, MAX_CONTEXT_FILE_CHARS, refused);
  };
  const system = read(workspace, join(projectDir, "SYSTEM.md"), "project") ??
    read(ternHome, join(ternHome, "SYSTEM.md"), "user");
  const append = [
    read(ternHome, join(ternHome, "APPEND_SYSTEM.md"), "user"),
    read(workspace, join(projectDir, "APPEND_SYSTEM.md"), "project"),
  ].filter((file) => file !== undefined);
  const inside = resolve(workspace);
  const context = [
    ...(personal ? folderFiles(ternHome, ternHome, "user", warn) : []),
    ...contextFolders(workspace, root).flatMap((dir) =>
      dir === inside
        ? folderFiles(workspace, dir, "project", warn, refuse)
        : folderFiles(dir, dir, "project", warn, besideOnly(dir, refuse))
    ),
  ];
  return { system, append, context: capTotal(context), repositoryRoot: root };
}

/**
 * The context files of the folders from below `workspace` down to the folder of `touched` (a
 * path a tool used) that are not in `visited` yet (by real path); each folder visited is added
 * to it. Paths outside the workspace, and folders under `node_modules` or `.git`, give none. At
 * most {@linkcode MAX_CONTEXT_TOTAL_CHARS} in one call: the walk stops before the folder whose
 * files would pass it, and leaves it and those below unvisited, so a repository's chain of
 * nested folders cannot put more than that into one tool result; they join with later calls.
 * Folders more than {@linkcode MAX_NESTED_CONTEXT_DEPTH} levels below the workspace give none.
 */
export function nestedContextFiles(
  workspace: string,
  touched: string,
  visited: Set<string>,
  refuse: ReadRefusal,
  warn?: Warn,
): ContextFile[] {
  const path = resolve(workspace, touched);
  const rel = relative(workspace, path);
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) return [];
  const info = lstatOrNull(path);
  const parts = rel.split(sep);
  if (!info?.isDirectory) parts.pop();
  parts.splice(MAX_NESTED_CONTEXT_DEPTH);
  const files: ContextFile[] = [];
  let dir = workspace;
  let total = 0;
  for (const part of parts) {
    if (SKIPPED_FOLDERS.has(part)) break;
    dir = join(dir, part);
    // By real path: a link back up (`sub/loop -> .`) names one folder at every depth.
    const folder = realPathOrNull(dir) ?? dir;
    if (visited.has(folder)) continue;
    const found = folderFiles(workspace, dir, "nested", warn, markdownOnly(refuse));
    total += found.reduce((sum, file) => sum + file.text.length, 0);
    if (total > MAX_CONTEXT_TOTAL_CHARS) break;
    visited.add(folder);
    files.push(...found);
  }
  return files;
}

/** The context files of one folder, read confined to `confine` (and `refuse`). */
function folderFiles(
  confine: string,
  dir: string,
  level: ResourceLevel,
  warn?: Warn,
  refuse?: ReadRefusal,
): ContextFile[] {
  const files: ContextFile[] = [];
  for (const name of CONTEXT_FILE_NAMES) {
    const file = readContextFile(confine, join(dir, name), level, warn, undefined, refuse);
    if (file === undefined) continue;
    if (files.some((other) => other.text === file.text)) continue;
    files.push(file);
  }
  return files;
}

/**
 * One resource file read confined to `confine` (and `refuse`, when given) and cut at `maxChars`
 * with a note; undefined when it is missing, refused (`warn` is told) or unreadable.
 */
export function readContextFile(
  confine: string,
  path: string,
  level: ResourceLevel,
  warn?: Warn,
  maxChars = MAX_CONTEXT_FILE_CHARS,
  refuse?: ReadRefusal,
): ContextFile | undefined {
  let text: string | undefined;
  try {
    text = readWorkspaceText(confine, path, {
      what: "context file",
      instructions: true,
      warn,
      refuse,
      // Enough bytes for more than the characters kept, whatever their width in UTF-8.
      maxBytes: 4 * maxChars + 4,
      head: true,
    });
  } catch (error) {
    warn?.(error instanceof Error ? error.message : String(error));
    return undefined;
  }
  if (text === undefined || text.trim() === "") return undefined;
  if (text.length <= maxChars) return { path, level, text, cut: false };
  return {
    path,
    level,
    text: `${text.slice(0, maxChars)}\n[${path} is longer: the rest was cut at ${maxChars} ` +
      "characters]",
    cut: true,
  };
}

/**
 * `refuse`, and a file of `dir` must be itself or a link to the other context file beside it
 * (`CLAUDE.md -> AGENTS.md`): nothing above the workspace is the model's to read, so a link there
 * to any other file (`AGENTS.md -> .env`) would show it what its tools cannot.
 */
function besideOnly(dir: string, refuse: ReadRefusal): ReadRefusal {
  const real = realPathOrNull(dir) ?? dir;
  const names: readonly string[] = CONTEXT_FILE_NAMES;
  return (path, named) => {
    if (dirname(path) !== real || !names.includes(basename(path))) {
      return `it leads to "${path}", and above the workspace tern follows a link only to the ` +
        `other context file beside it (${CONTEXT_FILE_NAMES.join(", ")})`;
    }
    // The repository's root may be the person's, and a folder on the way down to the workspace
    // still one anyone writes (mode 1777): a file planted there is not the project's word.
    const owner = foreignOwner(lstatOrNull(path), lstatOrNull(real));
    if (owner !== undefined) {
      return `it is above the workspace and belongs to another user (uid ${owner}), or its ` +
        "folder does";
    }
    return refuse(path, named);
  };
}

/**
 * `refuse`, and a nested file must be Markdown where a link leads too (`CLAUDE.md ->
 * ../docs/pkg.md`): its text joins a tool's result after the result's keys were masked, so a link
 * to another kind of file (`sub/AGENTS.md -> ../backend/.env`) would show the model what `read`
 * masks.
 */
function markdownOnly(refuse: ReadRefusal): ReadRefusal {
  return (path, named) =>
    /\.md$/i.test(path)
      ? refuse(path, named)
      : `it leads to "${path}", and below the workspace tern follows a link only to a Markdown ` +
        "(.md) file";
}

/** `refuse` for a project's (or a nested) file; none for the person's own, in tern's home. */
export function refuseFor(level: ResourceLevel, refuse: ReadRefusal): ReadRefusal | undefined {
  return level === "user" ? undefined : refuse;
}

/** Whose YAML time a header at `level` spends (frontmatter.ts): the person's own, or the repository's. */
export function headerOwner(level: ResourceLevel): HeaderOwner {
  return level === "user" ? "person" : "repository";
}

/**
 * Why `dir` (a resources folder under `confine`) is not searched: its real path leaves
 * `confine` through a symlink; undefined when it is inside, or missing.
 */
export function folderOutside(confine: string, dir: string): string | undefined {
  const root = realPathOrNull(confine) ?? confine;
  const real = realPathOrNull(dir);
  if (real === null || real === root || real.startsWith(root.endsWith(sep) ? root : root + sep)) {
    return undefined;
  }
  return `Skipping folder "${dir}": it leads out of ${confine} (to "${real}") through a symlink`;
}

/** Keeps files while the total fits; the rest become one-line notes. */
function capTotal(files: ContextFile[]): ContextFile[] {
  let total = 0;
  return files.map((file) => {
    total += file.text.length;
    if (total <= MAX_CONTEXT_TOTAL_CHARS) return file;
    return {
      ...file,
      text: `[${file.path} was left out: the context files exceed ` +
        `${MAX_CONTEXT_TOTAL_CHARS} characters together]`,
      cut: true,
    };
  });
}
