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
      let listed: Deno.DirEntry[];
      try {
        listed = [...Deno.readDirSync(dir)];
      } catch {
        continue;
      }
      read += listed.length;
      if (read > limits.entries) return false;
      next.push(...visit(dir, listed));
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
