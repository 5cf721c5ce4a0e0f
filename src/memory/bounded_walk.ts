/**
 * The one bounded folder walk of the resources (skills, memory topics): breadth first, never
 * through a symlink, within a number of levels and a budget of entries read, so a hostile or
 * huge tree costs a bounded start-up.
 */
import { join } from "../core/path.ts";

/** How far {@linkcode walkFolders} may go. */
export interface WalkLimits {
  /** Levels of folders listed: 1 lists `root` only. */
  levels: number;
  /** Entries read in all; past it the walk stops. */
  entries: number;
}

/**
 * A folder's size in bytes past which it is not listed at all: Deno reads a folder's entries in
 * one go, so a repository's folder of 300,000 files would cost most of a second and hundreds of
 * megabytes at every turn before any budget counts them. A folder's size grows with its
 * entries (ext4: about 28 bytes each, 256 KiB being some 9,000 of them); one of a file system
 * that reports none is listed as before.
 */
export const MAX_FOLDER_BYTES = 256 * 1024;

/**
 * The entries of `dir`, at most `maxEntries` of them (`complete` false when there were more, or
 * the folder is too large to list: {@linkcode MAX_FOLDER_BYTES}); undefined when it cannot be
 * listed (missing, not a folder, unreadable).
 */
export function listFolder(
  dir: string,
  maxEntries: number,
): { entries: Deno.DirEntry[]; complete: boolean } | undefined {
  try {
    const info = Deno.statSync(dir);
    if (!info.isDirectory) return undefined;
    if (info.size > MAX_FOLDER_BYTES) return { entries: [], complete: false };
    const entries: Deno.DirEntry[] = [];
    for (const entry of Deno.readDirSync(dir)) {
      if (entries.length >= maxEntries) return { entries, complete: false };
      entries.push(entry);
    }
    return { entries, complete: true };
  } catch {
    return undefined;
  }
}

/**
 * Lists `root`, then level by level the subfolders `visit` returns for each listed folder
 * (`visit` gets the folder and its entries, in the order read). Folders that cannot be listed
 * (missing, not a folder, unreadable) are skipped. Returns false when the entry budget ran out
 * (the walk stopped before the folder that passed it was visited), true otherwise.
 */
export function walkFolders(
  root: string,
  limits: WalkLimits,
  visit: (dir: string, entries: Deno.DirEntry[]) => string[],
): boolean {
  let queue = [root];
  let read = 0;
  for (let level = 0; level < limits.levels && queue.length > 0; level++) {
    const next: string[] = [];
    for (const dir of queue) {
      const listed = listFolder(dir, limits.entries - read + 1);
      if (listed === undefined) continue;
      read += listed.entries.length;
      if (!listed.complete || read > limits.entries) return false;
      next.push(...visit(dir, listed.entries));
    }
    queue = next;
  }
  return true;
}

/** The subfolders among `entries` of `dir` (symlinks never), sorted by name. */
export function subfolders(dir: string, entries: readonly Deno.DirEntry[]): string[] {
  return entries.filter((entry) => entry.isDirectory && !entry.isSymlink)
    .map((entry) => join(dir, entry.name)).sort();
}
