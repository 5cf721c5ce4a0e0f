/**
 * The one reader for files tern itself takes from a workspace (`AGENTS.md`, `.env`,
 * `.tern/config.jsonc`, `.mcp.json`, `.tern/mcp*.json`): read the way a file tool reads, since a
 * repository, or a command the model ran, may have made any of them.
 *
 * Only a regular file whose real path is inside the workspace, with one hard link, is read: a
 * symlink (at the file or any folder above it) leading out of the workspace could make tern read
 * the person's own files as the project's (`.env -> ~/.env`), and a hard link shares its content
 * with a file that may live anywhere. The file is opened, then the opened handle is compared
 * with what the checks saw (`openVerified` in src/core/verified_open.ts), so a swap in between
 * is refused too. A refused file is skipped with a warning that names it; a missing one is
 * silently absent.
 */
import { join, relative, sep } from "../core/path.ts";
import { ToolError } from "../core/observation.ts";
import { warnPerson } from "../core/warnings.ts";
import { withoutInvisible } from "../core/invisible_text.ts";
import { isMissing, lstatOrNull, openVerified, realPathOrNull } from "../core/verified_open.ts";
import { ConfigError, describeReadError } from "./errors.ts";

/** Receives one warning line (without the `tern: warning: ` prefix). */
export type Warn = (text: string) => void;

/**
 * Why a file tern reads for the model may not be read, given its real path and the path as
 * named (both absolute); undefined when it may. Built by the harness from what the sandbox keeps
 * from tools (src/harness/read_guard.ts): a file the model could not read with its own tools is
 * not read for it either.
 */
export type ReadRefusal = (real: string, named: string) => string | undefined;

/** Options of {@linkcode readWorkspaceText}. */
export interface WorkspaceReadOptions {
  /** What the file is, for messages: `project config`, `.env file`, `MCP config`. */
  what: string;
  /** Told why a file is skipped; default: `warnPerson()` (src/core/warnings.ts). */
  warn?: Warn;
  /**
   * The most bytes read (default {@linkcode MAX_WORKSPACE_FILE_BYTES}): a repository's file may
   * be of any size, and tern never reads more than this of it. A larger file is skipped (`warn`
   * says so), or with `head`, only its first `maxBytes` are read.
   */
  maxBytes?: number;
  head?: boolean;
  /**
   * The text goes to the model as instructions a person can read (a context file, a skill, a
   * template, a memory file): the characters that draw as nothing are removed
   * (`withoutInvisible`, src/core/invisible_text.ts).
   */
  instructions?: boolean;
  /**
   * The caller resolved `workspace` to its real path already (a walk reading many files): it is
   * not resolved again per file. Safe even if the folder is swapped meanwhile: each file's own
   * real path must still lie below it.
   */
  workspaceIsReal?: boolean;
  /** Asked once the real path is known; a reason refuses the file (`warn` is told). */
  refuse?: ReadRefusal;
  /**
   * Refuse a file reached through a symlink anywhere on its path (its real path is not the path
   * as named): for callers that decided what may be read by the path as named (the code index
   * by the path it walked). Checked when the file is resolved: a process swapping a folder with
   * a link can still race it, which only a view without the hidden files closes (the tool
   * worker in bubblewrap).
   */
  noLinks?: boolean;
}

/** The most tern reads of a workspace file by default: 1 MiB. */
export const MAX_WORKSPACE_FILE_BYTES = 1024 * 1024;

/**
 * The text of `file`, a path inside `workspace` (both absolute), read only when it is a regular
 * file inside the workspace's real path with a single hard link (see the module notes).
 * @returns undefined when the file does not exist, or when it was refused (then `warn` was told
 *   `Skipping <what> "<file>": <why>`).
 * @throws {ConfigError} naming the file when it passed the checks but cannot be read, or is a
 *   folder.
 */
export function readWorkspaceText(
  workspace: string,
  file: string,
  options: WorkspaceReadOptions,
): string | undefined {
  const warn = options.warn ?? warnPerson;
  const skip = (why: string): undefined => {
    warn(`Skipping ${options.what} "${file}": ${why}`);
    return undefined;
  };
  const fail = (error: unknown): never => {
    throw new ConfigError(
      `Cannot read ${options.what} "${file}": ${describeReadError(error)}`,
      { file, cause: error },
    );
  };
  try {
    // A missing file costs one lookup: resolving the workspace's real path costs a lookup per
    // folder on its way, and a walk from a deep workspace asks for a missing file in each.
    if (lstatOrNull(file) === null) return undefined;
    const root = options.workspaceIsReal ? workspace : realPathOrNull(workspace) ?? workspace;
    const path = options.workspaceIsReal && file.startsWith(`${root}${sep}`)
      ? file
      : join(root, relative(workspace, file));
    if (lstatOrNull(path) === null) return undefined;
    const real = unlinkedBelow(root, path) ? path : realPathOrNull(path);
    // A dangling symlink: nothing to read.
    if (real === null) return undefined;
    if (real !== root && !real.startsWith(root.endsWith(sep) ? root : root + sep)) {
      return skip(`it leads out of the workspace (to "${real}") through a symlink`);
    }
    if (options.noLinks && real !== path) {
      return skip(`it is reached through a symlink (it is "${real}")`);
    }
    const refused = options.refuse?.(real, file);
    if (refused !== undefined) return skip(refused);
    const info = lstatOrNull(real);
    if (info === null) return undefined;
    if (info.isDirectory) return fail(new Deno.errors.IsADirectory());
    if (!info.isFile) return skip("it is not a regular file");
    if (info.nlink !== null && info.nlink > 1) return skip(hardLinks(info.nlink));
    using opened = openVerified({ path: file, real, info });
    if (opened.links > 1) return skip(hardLinks(opened.links));
    const max = options.maxBytes ?? MAX_WORKSPACE_FILE_BYTES;
    // One byte more than the file had when it was opened, or than may be read: either shows.
    const bytes = opened.head(Math.min(max, opened.size) + 1);
    const text = (bytes: Uint8Array) => {
      const decoded = new TextDecoder().decode(bytes);
      return options.instructions ? withoutInvisible(decoded) : decoded;
    };
    if (bytes.length > max) {
      if (!options.head) return skip(`it is larger than ${max} bytes`);
      return text(bytes.subarray(0, max));
    }
    if (bytes.length > opened.size) return skip("it grew while it was being read");
    return text(bytes);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if (isMissing(error)) return undefined;
    if (error instanceof ToolError) {
      if (error.code === "NOT_FOUND") return undefined;
      return skip(error.message.replace(/^Path "[^"]*" /, "it "));
    }
    return fail(error);
  }
}

/**
 * True when `path`, below the real folder `root`, is its own real path: no name on its way from
 * `root` is a symlink. One `lstat` per name below `root`, where resolving the whole path costs one
 * per folder from `/` for each of them.
 */
function unlinkedBelow(root: string, path: string): boolean {
  const rel = relative(root, path);
  if (rel === "" || rel.startsWith("..")) return false;
  let at = root;
  return rel.split(sep).every((name) => !(lstatOrNull(at = join(at, name))?.isSymlink ?? true));
}

function hardLinks(count: number): string {
  return `it has ${count} hard links, and a hard link shares its content with a file that ` +
    "may be outside the workspace";
}
