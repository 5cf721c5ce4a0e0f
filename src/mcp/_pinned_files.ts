/**
 * The workspace files a project server's command line names (its script or entry point:
 * `node ./server.js`, `python tools/srv.py`, `deno run x.ts`), with a hash of each one's
 * content, so that trusting the server pins what actually runs, not only the words that start it.
 *
 * A file is hashed as a stream, never read whole, and only up to {@linkcode MAX_PINNED_FILE_BYTES}:
 * a repository (untrusted) chooses the names, so a name may lead to a huge file, a FIFO or a
 * device. A file that cannot be pinned (too large, not a regular file, unreadable) gets a pin
 * that never holds (`pinChanges` names why), and a symlink out of the workspace is pinned by
 * where it leads, never read: what lies outside is not the project's.
 */
import { basename, dirname, join, relative, resolve, sep } from "../core/path.ts";
import { lstatOrNull, openVerified, realPathOrNull } from "../core/verified_open.ts";
import { WORKSPACE_PIN } from "./types.ts";
import { visibleText } from "../core/terminal_text.ts";

/** Arguments that name a script even before the file exists. */
const SCRIPT_NAME = /\.(?:[cm]?[jt]sx?|py|rb|sh|bash|zsh|pl|php|lua|jar|wasm|exe|bat|ps1)$/i;
/** What a file that is named but absent is pinned as: creating it needs trust again. */
export const MISSING = "missing";
/** The largest file whose content is pinned (32 MiB); a larger one cannot be trusted. */
export const MAX_PINNED_FILE_BYTES = 32 * 1024 * 1024;
/** The most files pinned in the folder of one named script ({@linkcode pinnedFiles}' `siblings`). */
export const MAX_PINNED_FOLDER_FILES = 100;
/** How the pin of a file that cannot be pinned starts; such a pin never holds. */
const UNPINNABLE = "unpinnable: ";

/** A pin that never holds, `reason` saying why (`pinChanges` names it). */
export function unpinnable(reason: string): string {
  return `${UNPINNABLE}${reason}`;
}
/** How the pin of a symlink out of the workspace starts: then where it leads. */
const OUTSIDE = "outside the workspace: ";
/** The pin of a file named but not read (`hash: false`): a list of what trust would pin. */
export const NOT_HASHED = "not hashed until trusted";

/**
 * The workspace files `argv` names, relative to `workspace`, each with the SHA-256 (hex) of its
 * content, or {@linkcode MISSING} for a script-like path that does not exist (yet). Relative
 * paths start at `cwd`. An argument counts when it is a path inside the workspace to a file, or
 * a path inside it that looks like a script (it holds a "/" or ends in a script's extension);
 * `--flag=value` counts by its value. The program itself counts only when written as a path.
 * Symlinks inside the workspace are followed (what is hashed is what would run); one that leads
 * out is pinned by its target. With `siblings`, the other files of each named script's folder
 * (the program, or a file with a script's extension) and of the folders below it are pinned too
 * (at most {@linkcode MAX_PINNED_FOLDER_FILES} files, {@linkcode MAX_PINNED_FOLDER_DEPTH}
 * levels), and so are those of the folder the script lies in when a link leads to it: what a
 * script sources or imports (`helper.py`, or a package `helper/` beside `hook.py`) is code that
 * runs as well; a data file (`wc -c data.bin`) pins only itself. A `__pycache__` holding files
 * can never be pinned (compiled Python replaces its source unseen). The
 * indexes in `scripts` name code whatever their names (`bash tools/check`); a folder among them
 * (`python3 tools/pkg`) has its own files pinned. The folder of an index in `shallow` (a build
 * tool's file, such as the Makefile) is pinned one level only. With `hash`
 * false, no file is read: each that would be hashed is {@linkcode NOT_HASHED}.
 */
export async function pinnedFiles(
  argv: readonly string[],
  cwd: string,
  workspace: string,
  options: {
    siblings?: boolean;
    hash?: boolean;
    scripts?: ReadonlySet<number>;
    shallow?: ReadonlySet<number>;
  } = {},
): Promise<Record<string, string>> {
  const hash = options.hash ?? true;
  const root = realPathOrNull(workspace) ?? workspace;
  const pins: Record<string, string> = {};
  // Each folder whose files are pinned, and whether the folders below it are too.
  const folders = new Map<string, boolean>();
  const addFolder = (folder: string, deep: boolean) =>
    folders.set(folder, deep || (folders.get(folder) ?? false));
  for (const [index, arg] of argv.entries()) {
    const value = arg.startsWith("-") ? arg.slice(arg.indexOf("=") + 1 || arg.length) : arg;
    if (value === "" || value.includes("://") || value.includes("\0")) continue;
    if (index === 0 && !value.includes("/")) continue;
    const path = resolve(cwd, value);
    if (!isInside(path, workspace)) continue;
    const name = relative(workspace, path);
    const pin = await filePin(path, root, hash);
    const script = index === 0 || SCRIPT_NAME.test(value) || options.scripts?.has(index) === true;
    if (pin !== undefined) {
      pins[name] = pin;
      if (script && !pin.startsWith(OUTSIDE)) {
        const deep = options.shallow?.has(index) !== true;
        addFolder(dirname(path), deep);
        // Through a link (`tools/check.py -> ../lib/check.py`) Python and Node import from
        // the folder where the script lies, so that folder's files run too.
        const real = realPathOrNull(path);
        if (real !== null && isInside(real, root)) {
          addFolder(join(workspace, relative(root, dirname(real))), deep);
        }
      }
    } else if (options.scripts?.has(index) && isFolderInside(path, root)) {
      // A folder that runs (`python3 tools/pkg` runs its `__main__.py`): its files are pinned.
      addFolder(path, true);
    } else if (value.includes("/") || SCRIPT_NAME.test(value)) pins[name] ??= MISSING;
  }
  if (options.siblings) {
    for (const [folder, deep] of folders) {
      Object.assign(pins, await folderPins(folder, { workspace, root, hash, deep }));
    }
  }
  return pins;
}

/** How many levels of folders below a script's folder are pinned (see {@linkcode pinnedFiles}). */
export const MAX_PINNED_FOLDER_DEPTH = 8;

/**
 * The pins of the files in `folder` and in every folder below it (a package folder `helper/`
 * beside `helper.py` is what `import helper` runs, and `json/` shadows the standard library's),
 * or one pin that never holds: when the tree holds more than {@linkcode MAX_PINNED_FOLDER_FILES}
 * files or folders or goes deeper than {@linkcode MAX_PINNED_FOLDER_DEPTH}, or when a
 * `__pycache__` in it holds a file (compiled Python runs in place of its source, and nobody can
 * review it). Without `deep`, only the files of `folder` itself (beside a build tool's file).
 */
async function folderPins(
  folder: string,
  where: { workspace: string; root: string; hash: boolean; deep: boolean },
): Promise<Record<string, string>> {
  const { workspace, root } = where;
  const files: string[] = [];
  let subfolders = 0;
  const walk = async (dir: string, depth: number): Promise<Record<string, string> | undefined> => {
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const entry of Deno.readDir(dir)) {
        // Past this, the files or the folders alone are more than the cap: stop reading.
        if (where.deep && entries.push(entry) > 2 * MAX_PINNED_FOLDER_FILES) {
          return {
            [folderName(folder, workspace)]: `${UNPINNABLE}it holds more than ` +
              `${MAX_PINNED_FOLDER_FILES} files, the most pinned beside a script (its ` +
              "subfolders included); keep the scripts in a folder of their own",
          };
        }
        if (!where.deep) entries.push(entry);
      }
    } catch (error) {
      return { [folderName(dir, workspace)]: `${UNPINNABLE}${(error as Error).message}` };
    }
    if (dir !== folder && basename(dir) === "__pycache__" && entries.length > 0) {
      return {
        [folderName(dir, workspace)]: `${UNPINNABLE}it holds compiled Python, which runs in ` +
          "place of the pinned source and cannot be reviewed; remove it and run Python with " +
          "`-B` (`python3 -B tools/hook.py`) so that none is written again",
      };
    }
    for (const entry of entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) {
      const path = join(dir, entry.name);
      // A link to a folder inside the workspace is followed like a folder (a loop ends at the
      // depth bound); one to a folder outside is pinned by where it leads (filePin).
      const folderHere = entry.isDirectory ||
        (entry.isSymlink && isFolderInside(path, root));
      if (folderHere) {
        if (!where.deep) continue;
        // Empty folders hold no code, but a tree of many would make every check slow.
        if (++subfolders > MAX_PINNED_FOLDER_FILES) {
          return {
            [folderName(folder, workspace)]: `${UNPINNABLE}it holds more than ` +
              `${MAX_PINNED_FOLDER_FILES} folders, the most pinned below a script; keep the ` +
              "scripts in a folder of their own",
          };
        }
        if (depth >= MAX_PINNED_FOLDER_DEPTH) {
          return {
            [folderName(folder, workspace)]: `${UNPINNABLE}it holds folders more than ` +
              `${MAX_PINNED_FOLDER_DEPTH} levels deep, the most pinned below a script; keep ` +
              "the scripts in a folder of their own",
          };
        }
        const problem = await walk(path, depth + 1);
        if (problem !== undefined) return problem;
      } else if (files.push(path) > MAX_PINNED_FOLDER_FILES) {
        return {
          [folderName(folder, workspace)]: `${UNPINNABLE}it holds more than ` +
            `${MAX_PINNED_FOLDER_FILES} files, the most pinned beside a script (its subfolders ` +
            "included); keep the scripts in a folder of their own",
        };
      }
    }
    return undefined;
  };
  const problem = await walk(folder, 0);
  if (problem !== undefined) return problem;
  const pins: Record<string, string> = {};
  for (const path of files) {
    const pin = await filePin(path, root, where.hash);
    if (pin !== undefined) pins[relative(workspace, path)] = pin;
  }
  return pins;
}

function isFolderInside(path: string, root: string): boolean {
  const real = realPathOrNull(path);
  return real !== null && isInside(real, root) && lstatOrNull(real)?.isDirectory === true;
}

function folderName(folder: string, workspace: string): string {
  return folder === workspace ? "./" : `${relative(workspace, folder)}/`;
}

function isInside(path: string, folder: string): boolean {
  return path !== folder && path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/**
 * The pin of the file at `path`: the SHA-256 (hex) of a regular file inside `root` (the
 * workspace's real path), streamed; where a symlink out of the workspace leads; a pin that
 * never holds for a file that cannot be pinned; undefined when there is nothing (or a folder).
 * Never throws, never reads more than {@linkcode MAX_PINNED_FILE_BYTES} + 1 bytes, never opens
 * a FIFO or a device; with `hash` false reads nothing ({@linkcode NOT_HASHED}).
 */
async function filePin(path: string, root: string, hash: boolean): Promise<string | undefined> {
  const tooLarge = `${UNPINNABLE}it is larger than ${MAX_PINNED_FILE_BYTES / 1024 / 1024} MiB`;
  try {
    const real = realPathOrNull(path);
    if (real === null) return undefined;
    if (!isInside(real, root)) return `${OUTSIDE}${real}`;
    const info = lstatOrNull(real);
    if (info === null || info.isDirectory) return undefined;
    if (!info.isFile) return `${UNPINNABLE}it is not a regular file`;
    if (info.size > MAX_PINNED_FILE_BYTES) return tooLarge;
    if (!hash) return NOT_HASHED;
    using file = openVerified({ path, real, info });
    // Loaded only to hash: node:crypto brings in Deno's Node layer, which the start of a run
    // (hooks, MCP servers) must not pay for (tests/cli/start_up_test.ts).
    const { createHash } = await import("node:crypto");
    const digest = createHash("sha256");
    let read = 0;
    for await (const chunk of file.chunks()) {
      read += chunk.length;
      if (read > MAX_PINNED_FILE_BYTES) return tooLarge;
      digest.update(chunk);
    }
    return digest.digest("hex");
  } catch (error) {
    return `${UNPINNABLE}it cannot be read (${(error as Error).message})`;
  }
}

/**
 * The whole `workspace` as one pin: a SHA-256 over the path, kind, size, modification and
 * change times and inode of every entry below it (`.git` left out, symlinks not followed but
 * their targets counted). For a project server with the network: the files its command line
 * names are not all the code it runs (`server.js` may `require("./lib.js")`), and any file of
 * the workspace can be changed by the agent's commands, which have no network; a server that
 * loads one would give that code the network. So trusting such a server pins every file, and
 * any change since (by the agent, a pull, or the person) needs trust again. The change time
 * cannot be set back by a command, so a file rewritten and given its old mtime still counts.
 */
export async function pinnedWorkspace(workspace: string): Promise<Record<string, string>> {
  const lines: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch (error) {
      lines.push(`${prefix}\0unreadable:${(error as Error).name}`);
      return;
    }
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (const entry of entries) {
      if (prefix === "" && entry.name === ".git") continue;
      const path = `${dir}${sep}${entry.name}`;
      const name = `${prefix}${entry.name}`;
      let info: Deno.FileInfo;
      try {
        info = await Deno.lstat(path);
      } catch {
        continue;
      }
      const kind = info.isSymlink
        ? `l:${await Deno.readLink(path).catch(() => "")}`
        : info.isDirectory
        ? "d"
        : "f";
      lines.push(
        [name, kind, info.size, info.mtime?.getTime(), info.ctime?.getTime(), info.ino].join("\0"),
      );
      if (info.isDirectory) await walk(path, `${name}/`);
    }
  };
  await walk(workspace, "");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(lines.join("\n")));
  return { [WORKSPACE_PIN]: hex(digest) };
}

function hex(digest: ArrayBuffer): string {
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Why the pins `now` differ from the pins trusted `then`, as one phrase per file
 * (`"server.js" changed`); empty when they are the same and each could be pinned (a file too
 * large, unreadable or not a regular file never holds trust).
 */
export function pinChanges(
  then: Readonly<Record<string, string>>,
  now: Readonly<Record<string, string>>,
): string[] {
  const changes: string[] = [];
  for (const key of [...new Set([...Object.keys(then), ...Object.keys(now)])].sort()) {
    const before = then[key];
    const after = now[key];
    // A repository chooses its file names: a line break or escape in one must not forge lines
    // of `tern hooks list` or `tern mcp list`.
    const name = visibleText(key);
    if (after?.startsWith(UNPINNABLE)) {
      // Read on with the caller's "since you trusted it".
      changes.push(`${unpinnablePhrase(key, after)}, so trust has not held`);
    } else if (before === after) continue;
    else if (before === undefined) changes.push(`it now runs "${name}"`);
    else if (after === undefined) changes.push(`it no longer runs "${name}"`);
    else if (after === MISSING) changes.push(`"${name}" was removed`);
    else if (before === MISSING) changes.push(`"${name}" was created`);
    else if (key === WORKSPACE_PIN) {
      changes.push("files of the workspace changed (a server with the network may load any)");
    } else changes.push(`"${name}" changed`);
  }
  return changes;
}

/**
 * Why `pins` can never hold trust, one phrase per pin that cannot be pinned (`"the command
 * line" cannot be pinned (…)`); empty when every one can.
 */
export function unpinnableReasons(pins: Readonly<Record<string, string>>): string[] {
  return Object.keys(pins).sort().filter((key) => pins[key].startsWith(UNPINNABLE))
    .map((key) => unpinnablePhrase(key, pins[key]));
}

function unpinnablePhrase(key: string, pin: string): string {
  return `"${visibleText(key)}" cannot be pinned (${visibleText(pin.slice(UNPINNABLE.length))})`;
}
