/**
 * Writing and removing files of a restore, only inside the workspace and never through a
 * symlink: every folder on the way is checked with lstat (a symlink or a file there is refused),
 * a file or link is made under a temporary name in its folder and renamed over the old one (a
 * rename replaces a symlink, it never writes through it), and the folder's real path is checked
 * again just before the rename. A folder swapped for a link between a check and the call that
 * follows it still wins the race: what holds then is the view the restore process runs in
 * (view.ts), where nothing outside the workspace exists.
 */
import { TernError } from "../../core/errors.ts";

/**
 * How the temporary names start: a restore killed between a write and its rename leaves one
 * behind, which a rewind stopped partway then counts as its own (interrupted.ts).
 */
export const SCRATCH_PREFIX = ".tern-rewind-";

/** How deep a tree of empty folders where a file goes may be for a restore to remove it. */
export const MAX_FOLDER_DEPTH = 64;

/** The restore's error when its request ends before its end line (tern stopped sending). */
export const CUT_SHORT = "Cannot restore the files: the request was cut short";

/**
 * `folder`/`path`, for an absolute folder and a path whose parts `pathParts` let through (no
 * `.`, `..` or empty part; every caller checks first): nothing to normalize. The restore process runs without a config, so it
 * imports no package (src/core/path.ts is one).
 */
function join(folder: string, path: string): string {
  return folder.endsWith("/") ? folder + path : `${folder}/${path}`;
}

/** The parts of a relative path from a tree, or a refusal for one that could leave the folder. */
export function pathParts(path: string): string[] {
  const parts = path.split("/");
  const bad = path === "" || path.startsWith("/") || path.includes("\0") ||
    parts.some((part) => part === "" || part === "." || part === "..");
  if (bad) throw new TernError(`Cannot restore "${path}": not a plain relative path`);
  // A rewind leaves these out (rewind.ts): a store tree that names them was made by someone else.
  if (neverRestored(path)) {
    throw new TernError(`Cannot restore "${path}": tern never restores into .git or .tern`);
  }
  return parts;
}

/**
 * Whether a rewind leaves `path` (relative to the workspace) as it is: inside the workspace's
 * `.tern` (its settings and memory, which only the person and tern write) or inside any `.git`
 * (git's hooks and config run code on the host; commands cannot write them either).
 */
export function neverRestored(path: string): boolean {
  const parts = path.split("/");
  return parts[0] === ".tern" || parts.some((part) => part.toLowerCase() === ".git");
}

/**
 * The folder of `path` (made when `create`), checked to be a real folder at every step; undefined
 * when a folder is missing and `create` is false.
 */
async function parentFolder(
  workspace: string,
  path: string,
  create: boolean,
): Promise<string | undefined> {
  const parts = pathParts(path);
  let folder = workspace;
  for (const part of parts.slice(0, -1)) {
    folder = join(folder, part);
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(folder);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      if (!create) return undefined;
      await Deno.mkdir(folder);
      continue;
    }
    if (info.isSymlink || !info.isDirectory) {
      throw new TernError(
        `Cannot restore "${path}": "${folder.slice(workspace.length + 1)}" is ${
          info.isSymlink ? "a symlink" : "not a folder"
        }`,
      );
    }
  }
  return folder;
}

/** The folder must still be the one checked: the workspace's real path plus the parts. */
async function recheck(workspace: string, folder: string, path: string): Promise<void> {
  if ((await Deno.realPath(folder)) !== folder) {
    throw new TernError(`Cannot restore "${path}": its folder changed while restoring`);
  }
  if (!folder.startsWith(workspace)) {
    throw new TernError(`Cannot restore "${path}": outside the workspace`);
  }
}

/**
 * Writes `content` (bytes, or chunks of them as they come) at `path` (relative to `workspace`,
 * an absolute real path) with the executable bits of `executable`, keeping the read and write
 * bits of a file already there (never its setuid, setgid or sticky bit: a restored file is no
 * program that runs as its owner); a file made anew gets 644 or 755 less the umask.
 */
export async function writeFileSafely(
  workspace: string,
  path: string,
  content: Uint8Array | AsyncIterable<Uint8Array>,
  executable: boolean,
): Promise<void> {
  const folder = (await parentFolder(workspace, path, true))!;
  const target = join(workspace, path);
  const old = await Deno.lstat(target).catch(() => undefined);
  await clearFolder(old, target, path);
  const base = old?.isFile && old.mode !== null ? old.mode & 0o777 & ~0o111 : 0o644;
  const mode = executable ? base | ((base & 0o444) >> 2) | 0o100 : base;
  const scratch = join(folder, `${SCRATCH_PREFIX}${crypto.randomUUID()}`);
  try {
    // Made with open(), whose mode the umask filters (Deno.writeFile's would not be).
    const file = await Deno.open(scratch, { write: true, createNew: true, mode });
    try {
      for await (const bytes of content instanceof Uint8Array ? [content] : content) {
        for (let at = 0; at < bytes.length;) at += await file.write(bytes.subarray(at));
      }
    } finally {
      file.close();
    }
    // A file replaced keeps its bits as they were. One made anew (the turn removed it) gets no
    // more than the umask allows, as from git: the checkpoint knows only 644 or 755, and a
    // private key it brings back must not become readable by everyone.
    if (old?.isFile) await Deno.chmod(scratch, mode);
    await recheck(workspace, folder, path);
    await Deno.rename(scratch, target);
  } catch (error) {
    await Deno.remove(scratch).catch(() => {});
    throw error;
  }
}

/** Makes `path` a symlink to `link` (as stored: a link is restored, never followed). */
export async function writeLinkSafely(
  workspace: string,
  path: string,
  link: string,
): Promise<void> {
  const folder = (await parentFolder(workspace, path, true))!;
  const target = join(workspace, path);
  await clearFolder(await Deno.lstat(target).catch(() => undefined), target, path);
  const scratch = join(folder, `${SCRATCH_PREFIX}${crypto.randomUUID()}`);
  try {
    await Deno.symlink(link, scratch);
    await recheck(workspace, folder, path);
    await Deno.rename(scratch, target);
  } catch (error) {
    await Deno.remove(scratch).catch(() => {});
    throw error;
  }
}

/**
 * Removes the file or symlink at `path` (never a folder, never what a link points to). The
 * folders it leaves empty stay until {@linkcode removeEmptyFolders}.
 */
export async function removeSafely(workspace: string, path: string): Promise<void> {
  const folder = await parentFolder(workspace, path, false);
  if (folder === undefined) return;
  const target = join(workspace, path);
  const info = await Deno.lstat(target).catch(() => undefined);
  if (!info || info.isDirectory) return;
  await recheck(workspace, folder, path);
  await Deno.remove(target);
}

/**
 * Removes the folders above `paths` (given to {@linkcode removeSafely}) that are empty now,
 * deepest first, up to the workspace. Called once every file is back: a folder removed between
 * its files' removal and their writes would be made anew, without its permissions (a private
 * folder's 0700). Never throws: a folder that holds something, or is no folder, stays.
 */
export async function removeEmptyFolders(
  workspace: string,
  paths: Iterable<string>,
): Promise<void> {
  const folders = new Set<string>();
  for (const path of paths) {
    let parts: string[];
    try {
      parts = pathParts(path);
    } catch {
      continue;
    }
    for (let end = parts.length - 1; end > 0; end--) folders.add(parts.slice(0, end).join("/"));
  }
  const depth = (folder: string) => folder.split("/").length;
  for (const folder of [...folders].sort((a, b) => depth(b) - depth(a))) {
    try {
      // Each part a folder by lstat (a link the restore wrote above it is never followed out of
      // the workspace), and not recursive: a folder with anything in it fails.
      const dir = await parentFolder(workspace, `${folder}/-`, false);
      if (dir === undefined) continue;
      await recheck(workspace, dir, folder);
      await Deno.remove(dir);
    } catch {
      // Not empty, gone, or no folder: it stays as it is.
    }
  }
}

/**
 * A folder where a file goes is removed when it holds nothing but folders (empty, or holding
 * only such folders: the rewind's check counts them as empty too); a folder with a file, link
 * or anything else in it is refused.
 */
async function clearFolder(
  info: Deno.FileInfo | undefined,
  target: string,
  path: string,
): Promise<void> {
  if (!info?.isDirectory) return;
  try {
    await removeEmptyTree(target);
  } catch {
    throw new TernError(`Cannot restore "${path}": a folder with files is in its place`);
  }
}

/** Removes folder `folder` and the folders in it, deepest first; throws at anything else. */
async function removeEmptyTree(folder: string, depth = 0): Promise<void> {
  if (depth > MAX_FOLDER_DEPTH) throw new TernError(`Cannot remove "${folder}": too deep`);
  for await (const entry of Deno.readDir(folder)) {
    // Checked again with lstat: a name's entry type comes from the folder, a link is never entered.
    const inner = join(folder, entry.name);
    const info = await Deno.lstat(inner);
    if (!info.isDirectory || info.isSymlink) throw new TernError(`"${inner}" is no folder`);
    await removeEmptyTree(inner, depth + 1);
  }
  // Not recursive: a file that appeared meanwhile makes it fail.
  await Deno.remove(folder);
}
