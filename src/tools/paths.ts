/**
 * Path confinement for the file tools. Deno's permission flags follow symlinks and hard links,
 * so every path a tool touches is resolved to its real location and checked here first.
 * Opening what was checked, and noticing when it changed in between, is `file_io.ts`'s job.
 */
import {
  basename,
  dirname,
  isAbsolute,
  isInside,
  join,
  relative,
  resolve,
  sep,
} from "../core/path.ts";
import { ToolError } from "../core/observation.ts";
import { jsonForTerminal } from "../core/terminal_text.ts";

/** Options for {@linkcode checkPath} and {@linkcode resolveInWorkspace}. */
export interface ResolveOptions {
  /**
   * The caller is about to replace the file: an existing target must not be hard-linked
   * elsewhere (`nlink > 1`), and protected folders ({@linkcode PROTECTED_FOLDERS}) are refused.
   */
  forWrite?: boolean;
  /** With `forWrite`, allow writing inside {@linkcode PROTECTED_FOLDERS}; default false. */
  allowProtected?: boolean;
  /**
   * Folders besides the workspace the caller may use (absolute real paths, as granted by
   * request_permissions). A read may resolve into a read or a write root, a write
   * (`forWrite`) only into a write root. Default none.
   */
  roots?: PathRoots;
}

/** Absolute real paths besides the workspace that may be read, or written (and read). */
export interface PathRoots {
  read: readonly string[];
  write: readonly string[];
}

/** A path that passed the checks, with what was found there at the time. */
export interface CheckedPath {
  /** The path as the caller gave it, for messages. */
  path: string;
  /** Absolute real path inside the workspace or an allowed root. */
  real: string;
  /**
   * The folder `real` was allowed by: the workspace when it is inside, else the innermost
   * allowed root that holds it. Walks and output paths of list, glob and grep start here.
   */
  root: string;
  /** `lstat` of `real` when it was checked; null when nothing was there. */
  info: Deno.FileInfo | null;
}

/**
 * Folders whose contents the write tools refuse to change unless told otherwise, at any depth
 * (nested repositories too), with the reason given to the model.
 */
export const PROTECTED_FOLDERS: Readonly<Record<string, string>> = {
  ".git": "git runs hooks and reads settings from there, so a change could run commands",
  ".tern": "they hold tern's own configuration and permissions",
};

/**
 * A path ending in `/` or `/.` names a folder (the kernel refuses it for a file, ENOTDIR), but
 * resolving drops the ending: without this check `write "notes/"` would create a file `notes`
 * and `read "a.ts/"` would read one. Throws ToolError INVALID_ARGUMENTS when such a path names
 * a file, or, for a write, nothing yet.
 */
function refuseFolderSpelling(
  path: string,
  info: Deno.FileInfo | null,
  options: ResolveOptions,
): void {
  const ending = /(?:\/\.?)+$/.exec(path)?.[0];
  if (ending === undefined || info?.isDirectory) return;
  if (info !== null) {
    const bare = path.slice(0, -ending.length);
    throw new ToolError(
      "INVALID_ARGUMENTS",
      `Path "${path}" ends with "${ending}", which names a folder, but "${bare}" is a file: ` +
        `leave out the "${ending}"`,
    );
  }
  if (options.forWrite) {
    throw new ToolError(
      "INVALID_ARGUMENTS",
      `Cannot write "${path}": a path ending with "${ending}" names a folder, not a file; ` +
        "give the file's name",
    );
  }
}

/** Pseudo-filesystems whose files are views of processes and devices, never workspace files. */
const SYSTEM_ROOTS = ["/proc", "/dev", "/sys"];

const MAX_SYMLINK_HOPS = 40;

/**
 * Checks `path` (relative to `workspace`, or absolute) and resolves it to an absolute real path
 * inside the workspace or one of `options.roots`. A path that does not exist yet resolves
 * through its nearest existing ancestor, so parent symlinks and dangling symlinks are followed
 * too.
 *
 * `workspace` and the roots must already be real paths (a relative root is a TypeError).
 * Throws ToolError INVALID_ARGUMENTS for a NUL byte or a path ending in `/` that names a file
 * (or, for a write, nothing yet), and POLICY_DENIED when the path, before or
 * after resolving symlinks, is outside the workspace and every allowed root, or in /proc, /dev
 * or /sys (unless the workspace itself is there); when it names a special file (FIFO, socket,
 * device); and with `forWrite`, when it is in a protected folder (below the workspace, or
 * below any write root holding it), is a file with more than one hard link, or is missing and
 * reached through a dangling symlink (a new file then lands somewhere its path does not say).
 * A missing target is otherwise not an error here.
 *
 * Reading a file with several hard links is allowed: a hard link is an entry of the workspace
 * itself, and git object stores and pnpm's node_modules are made of them. Linking a file one
 * cannot write (`fs.protected_hardlinks`) or across mounts (the shell's sandbox) is refused by
 * the kernel, so such a link must have been made by the user.
 */
export async function checkPath(
  workspace: string,
  path: string,
  options: ResolveOptions = {},
): Promise<CheckedPath> {
  if (path.includes("\0")) {
    throw new ToolError("INVALID_ARGUMENTS", `Path ${JSON.stringify(path)} contains a NUL byte`);
  }
  const absolute = isAbsolute(path) ? resolve(path) : resolve(workspace, path);
  const extra = allowedRoots(options);
  const readOnly = options.forWrite ? absoluteRoots(options.roots?.read ?? []) : [];
  refuseOutside(workspace, { allowed: extra, readOnly }, path, absolute);
  const real = await realPathLoose(absolute, 0);
  const root = refuseOutside(workspace, { allowed: extra, readOnly }, path, real);
  const info = await lstatOrNull(real);
  const special = info === null ? null : specialKind(info);
  if (special !== null) {
    throw new ToolError(
      "POLICY_DENIED",
      `Path "${path}" is a ${special}: special files are refused`,
    );
  }
  refuseFolderSpelling(path, info, options);
  if (!options.forWrite) return { path, real, root, info };
  if (info === null) {
    const named = await realPathOfExisting(absolute);
    if (named !== real) {
      throw new ToolError(
        "POLICY_DENIED",
        `Cannot write "${path}": a symlink on the way leads to "${real}", which does not exist yet; ` +
          "write that path itself",
      );
    }
  }
  if (!options.allowProtected) {
    // Outside the workspace every write root counts: a folder protected below any of them is.
    const bases = root === workspace ? [workspace] : [workspace, ...extra];
    const folder = protectedIn(bases, absolute) ?? protectedIn(bases, real);
    if (folder !== null) {
      throw new ToolError(
        "POLICY_DENIED",
        `Cannot write "${path}": paths in ${folder} are protected because ` +
          `${PROTECTED_FOLDERS[folder]}; ask the user to make this change`,
      );
    }
  }
  if (info?.isFile && (info.nlink ?? 1) > 1) {
    throw new ToolError(
      "POLICY_DENIED",
      `Cannot write "${path}": it has ${info.nlink} hard links, so writing could change a file outside the workspace`,
    );
  }
  return { path, real, root, info };
}

/** {@linkcode checkPath}, for callers that only need the real path. */
export async function resolveInWorkspace(
  workspace: string,
  path: string,
  options: ResolveOptions = {},
): Promise<string> {
  return (await checkPath(workspace, path, options)).real;
}

/**
 * The protected folder (a key of {@linkcode PROTECTED_FOLDERS}) that absolute `path` is in or
 * is, below `workspace`; null when none. Names compare case-insensitively and without the
 * characters HFS+ leaves out of names, as some file systems do (`.G\u200cIT` is `.git` there,
 * which git itself refuses to check out for that reason).
 */
export function protectedFolder(workspace: string, path: string): string | null {
  if (!isInside(workspace, path)) return null;
  for (const part of relative(workspace, path).split(sep)) {
    const name = part.replace(HFS_IGNORED, "").toLowerCase();
    if (Object.hasOwn(PROTECTED_FOLDERS, name)) return name;
  }
  return null;
}

/** The code points HFS+ ignores in names (git's list, `is_hfs_dotgit`). */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

export { isInside };

/**
 * The path as the model should see it: relative to the workspace ("." for the root), or
 * absolute when it is outside (in a granted root).
 */
export function displayPath(workspace: string, absolute: string): string {
  return quotedName(shownPath(workspace, absolute));
}

/**
 * The path as {@linkcode displayPath} names it, in double quotes for a sentence (`Created "a.ts"`):
 * always a JSON string, so a name holding a quote or a line break still reads as one name, quoted
 * once.
 */
export function quotedPath(workspace: string, absolute: string): string {
  return jsonForTerminal(JSON.stringify(shownPath(workspace, absolute)));
}

function shownPath(workspace: string, absolute: string): string {
  return isInside(workspace, absolute) ? relative(workspace, absolute) || "." : absolute;
}

/**
 * A name from the repository as the model should see it: quoted as a JSON string when it holds
 * a line break or another control character, so it can never pass for lines of its own in a
 * listing (a file named "x.ts\nfake.ts:9:forged"); otherwise as it is. What `JSON.stringify`
 * leaves raw (C1 controls, U+2028 and U+2029, which read as line breaks) is escaped too, and so
 * is every character that draws as nothing (bidi, zero-width, tags): "con\u200bfig.ts" would
 * read as "config.ts" to the person while the model reads another file.
 */
export function quotedName(name: string): string {
  if (!CONTROL.test(name) && !HIDDEN.test(name)) return name;
  return jsonForTerminal(JSON.stringify(name)).replace(
    HIDDEN_ALL,
    (char) =>
      [...Array(char.length).keys()]
        .map((i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
  );
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** Format characters and the other default-ignorable code points (see invisible_text.ts). */
const HIDDEN = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const HIDDEN_ALL = new RegExp(HIDDEN.source, "gu");

/** `Deno.lstat`, with null for a path that does not exist. */
export async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** True for the errors that mean "nothing is there": not found, or a file used as a folder. */
export function isMissing(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
}

/** The roots `options` allows besides the workspace: write roots always, read roots for reads. */
function allowedRoots(options: ResolveOptions): string[] {
  const roots = options.roots;
  if (roots === undefined) return [];
  return absoluteRoots(options.forWrite ? roots.write : [...roots.read, ...roots.write]);
}

function absoluteRoots(roots: readonly string[]): string[] {
  return roots.map((root) => {
    if (!isAbsolute(root)) throw new TypeError(`Root "${root}" is not an absolute path`);
    return resolve(root);
  });
}

/**
 * Throws unless `absolute` is inside the workspace or one of `roots.allowed` (and not in a
 * system pseudo-filesystem); returns the folder that allows it: the workspace, else the
 * innermost allowed root. `roots.readOnly` only makes the message of a refused write clearer.
 */
function refuseOutside(
  workspace: string,
  roots: { allowed: readonly string[]; readOnly: readonly string[] },
  path: string,
  absolute: string,
): string {
  const system = SYSTEM_ROOTS.find((root) =>
    isInside(root, absolute) && !isInside(root, workspace)
  );
  if (system !== undefined) {
    throw new ToolError(
      "POLICY_DENIED",
      `Path "${path}" is in ${system}: system pseudo-filesystems (/proc, /dev, /sys) are refused`,
    );
  }
  if (isInside(workspace, absolute)) return workspace;
  const holding = roots.allowed.filter((root) => isInside(root, absolute));
  if (holding.length > 0) return holding.reduce((a, b) => b.length > a.length ? b : a);
  const readOnly = roots.readOnly.find((root) => isInside(root, absolute));
  if (readOnly !== undefined) {
    throw new ToolError(
      "POLICY_DENIED",
      `Cannot write "${path}": "${readOnly}" was granted for reading only; ask for write access with request_permissions`,
    );
  }
  const hint = roots.allowed.length > 0 ? " and the folders granted to it" : "";
  throw new ToolError(
    "POLICY_DENIED",
    `Path "${path}" is outside the workspace "${workspace}"${hint}`,
  );
}

/** The first protected folder `path` is in below any of `bases`; null when none. */
function protectedIn(bases: readonly string[], path: string): string | null {
  for (const base of bases) {
    const folder = protectedFolder(base, path);
    if (folder !== null) return folder;
  }
  return null;
}

/**
 * The real path of `path`, following dangling symlinks and resolving missing tails lexically (a
 * file about to be written need not exist); `path` itself when it cannot be resolved (a link
 * loop, a folder tern may not read). Never throws.
 */
export async function realPathOf(path: string): Promise<string> {
  return await realPathLoose(path, 0).catch(() => path);
}

/**
 * The real path of `path`'s nearest ancestor that resolves, with the rest of `path` appended as
 * written: where a new file would seem to go to anyone who does not follow dangling symlinks
 * (the permission question does not). Differs from {@linkcode realPathLoose} exactly when a
 * dangling symlink is on the way.
 */
async function realPathOfExisting(path: string): Promise<string> {
  const rest: string[] = [];
  for (let at = path;; at = dirname(at)) {
    try {
      return join(await Deno.realPath(at), ...rest);
    } catch (error) {
      if (!isMissing(error) || dirname(at) === at) return path;
      rest.unshift(basename(at));
    }
  }
}

/** The real path of `path`, following dangling symlinks and resolving missing tails lexically. */
async function realPathLoose(path: string, hops: number): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const info = await lstatOrNull(path);
  if (info?.isSymlink) {
    if (hops >= MAX_SYMLINK_HOPS) {
      throw new ToolError("EXECUTION_FAILED", `Cannot resolve "${path}": too many symlinks`);
    }
    const target = await Deno.readLink(path);
    return realPathLoose(resolve(dirname(path), target), hops + 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realPathLoose(parent, hops), basename(path));
}

function specialKind(info: Deno.FileInfo): string | null {
  if (info.isFifo) return "FIFO";
  if (info.isSocket) return "socket";
  if (info.isCharDevice || info.isBlockDevice) return "device";
  return null;
}
