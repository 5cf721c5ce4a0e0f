/**
 * Path confinement for the file tools. Deno's permission flags follow symlinks and hard links,
 * so every path a tool touches is resolved to its real location and checked here first.
 * Opening what was checked, and noticing when it changed in between, is `file_io.ts`'s job.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ToolError } from "../core/observation.ts";

/** Options for {@linkcode checkPath} and {@linkcode resolveInWorkspace}. */
export interface ResolveOptions {
  /**
   * The caller is about to replace the file: an existing target must not be hard-linked
   * elsewhere (`nlink > 1`), and protected folders ({@linkcode PROTECTED_FOLDERS}) are refused.
   */
  forWrite?: boolean;
  /** With `forWrite`, allow writing inside {@linkcode PROTECTED_FOLDERS}; default false. */
  allowProtected?: boolean;
}

/** A path that passed the checks, with what was found there at the time. */
export interface CheckedPath {
  /** The path as the caller gave it, for messages. */
  path: string;
  /** Absolute real path inside the workspace. */
  real: string;
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

/** Pseudo-filesystems whose files are views of processes and devices, never workspace files. */
const SYSTEM_ROOTS = ["/proc", "/dev", "/sys"];

const MAX_SYMLINK_HOPS = 40;

/**
 * Checks `path` (relative to `workspace`, or absolute inside it) and resolves it to an absolute
 * real path inside the workspace. A path that does not exist yet resolves through its nearest
 * existing ancestor, so parent symlinks and dangling symlinks are followed too.
 *
 * `workspace` must already be a real path. Throws ToolError INVALID_ARGUMENTS for a NUL byte,
 * and POLICY_DENIED when the path, before or after resolving symlinks, is outside the
 * workspace or in /proc, /dev or /sys (unless the workspace itself is there); when it names a
 * special file (FIFO, socket, device); and with `forWrite`, when it is in a protected folder
 * or is a file with more than one hard link. A missing target is not an error here.
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
  refuseOutside(workspace, path, absolute);
  const real = await realPathLoose(absolute, 0);
  refuseOutside(workspace, path, real);
  const info = await lstatOrNull(real);
  const special = info === null ? null : specialKind(info);
  if (special !== null) {
    throw new ToolError(
      "POLICY_DENIED",
      `Path "${path}" is a ${special}: special files are refused`,
    );
  }
  if (!options.forWrite) return { path, real, info };
  if (!options.allowProtected) {
    const folder = protectedFolder(workspace, absolute) ?? protectedFolder(workspace, real);
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
  return { path, real, info };
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
 * is, below `workspace`; null when none. Names compare case-insensitively, as some file
 * systems do.
 */
export function protectedFolder(workspace: string, path: string): string | null {
  if (!isInside(workspace, path)) return null;
  for (const part of relative(workspace, path).split(sep)) {
    const name = part.toLowerCase();
    if (Object.hasOwn(PROTECTED_FOLDERS, name)) return name;
  }
  return null;
}

/** True when `path` is `root` or below it, compared by whole path components. */
export function isInside(root: string, path: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}

/** The path as the model should see it: relative to the workspace, "." for the root. */
export function displayPath(workspace: string, absolute: string): string {
  return relative(workspace, absolute) || ".";
}

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

function refuseOutside(workspace: string, path: string, absolute: string): void {
  const system = SYSTEM_ROOTS.find((root) =>
    isInside(root, absolute) && !isInside(root, workspace)
  );
  if (system !== undefined) {
    throw new ToolError(
      "POLICY_DENIED",
      `Path "${path}" is in ${system}: system pseudo-filesystems (/proc, /dev, /sys) are refused`,
    );
  }
  if (!isInside(workspace, absolute)) {
    throw new ToolError("POLICY_DENIED", `Path "${path}" is outside the workspace "${workspace}"`);
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
