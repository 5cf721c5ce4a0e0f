/**
 * Path confinement for the file tools. Deno's permission flags follow symlinks and hard links,
 * so every path a tool touches is resolved to its real location and checked here first.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ToolError } from "../core/observation.ts";

/** Options for {@linkcode resolveInWorkspace}. */
export interface ResolveOptions {
  /**
   * The caller is about to replace the file: an existing target must not be hard-linked
   * elsewhere (`nlink > 1`), because writing through it would change a file outside.
   */
  forWrite?: boolean;
}

const MAX_SYMLINK_HOPS = 40;

/**
 * Resolves `path` (relative to `workspace`, or absolute inside it) to an absolute real path
 * inside the workspace. A path that does not exist yet resolves through its nearest existing
 * ancestor, so parent symlinks and dangling symlinks are followed too.
 *
 * `workspace` must already be a real path. Throws ToolError POLICY_DENIED when the result is
 * outside the workspace, names a special file (FIFO, socket, device) or, with `forWrite`, a
 * file with more than one hard link. A missing target is not an error here.
 */
export async function resolveInWorkspace(
  workspace: string,
  path: string,
  options: ResolveOptions = {},
): Promise<string> {
  const absolute = isAbsolute(path) ? resolve(path) : resolve(workspace, path);
  if (!isInside(workspace, absolute)) throw outside(path, workspace);
  const real = await realPathLoose(absolute, 0);
  if (!isInside(workspace, real)) throw outside(path, workspace);
  const info = await lstatOrNull(real);
  if (info === null) return real;
  const special = specialKind(info);
  if (special !== null) {
    throw new ToolError(
      "POLICY_DENIED",
      `Path "${path}" is a ${special}: special files are refused`,
    );
  }
  if (options.forWrite && info.isFile && (info.nlink ?? 1) > 1) {
    throw new ToolError(
      "POLICY_DENIED",
      `Cannot write "${path}": it has ${info.nlink} hard links, so writing could change a file outside the workspace`,
    );
  }
  return real;
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

function outside(path: string, workspace: string): ToolError {
  return new ToolError("POLICY_DENIED", `Path "${path}" is outside the workspace "${workspace}"`);
}
