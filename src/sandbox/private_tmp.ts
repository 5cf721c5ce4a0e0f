/**
 * The run's private tmp folder on the host (the file tools' `<tmp>`), held by a lock for as long
 * as the run lives, and the removal of those that runs killed before they could clean up.
 */
import { basename, dirname, join } from "../core/path.ts";

/** Every private tmp folder's name starts with this. */
export const PRIVATE_TMP_PREFIX = "tern-tmp-";

/**
 * Folders younger than this are left alone: a run that has just made its folder may not have
 * locked it yet.
 */
const FRESH_MS = 60_000;

/** A private tmp folder and the lock that marks it in use. */
export interface PrivateTmp {
  /** Its absolute real path. */
  readonly path: string;
  /** Removes the folder and lets go of the lock. Never throws. */
  remove(): Promise<void>;
}

/**
 * Makes a private tmp folder in `dir` (made when missing; default the system's tmp folder) and
 * holds an exclusive `flock` on it (on the folder itself, so nothing the run's tools may write
 * or delete inside can drop it): the lock goes with the process, however it ends, which is how
 * {@linkcode removeStaleTmp} tells a dead run's folder from a live one's.
 */
export async function makePrivateTmp(dir?: string): Promise<PrivateTmp> {
  if (dir !== undefined) await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const made = await Deno.makeTempDir({ prefix: PRIVATE_TMP_PREFIX, dir });
  const path = await Deno.realPath(made);
  let handle: Deno.FsFile | undefined;
  try {
    handle = await Deno.open(path, { read: true });
    await handle.lock(true);
  } catch {
    // A file system without locks: the folder is still private, only not swept up after a kill.
    handle?.close();
    handle = undefined;
  }
  return {
    path,
    async remove() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
      try {
        handle?.close();
      } catch {
        // Closed already.
      }
    },
  };
}

/**
 * Removes the private tmp folders that runs left behind in `dir` (default the folder `own`
 * sits in): each entry named `tern-tmp-*` that is a folder (not a link to one: the entry is
 * examined with `lstat`), belongs to this user, was last changed over a minute ago and whose
 * lock nobody holds. Removal does not
 * follow symbolic links inside. `own` (this run's folder) is never touched. Returns the paths
 * removed; never throws.
 */
export async function removeStaleTmp(own: string, dir = dirname(own)): Promise<string[]> {
  const removed: string[] = [];
  const uid = Deno.uid();
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch {
    return removed;
  }
  for (const entry of entries) {
    if (!entry.name.startsWith(PRIVATE_TMP_PREFIX) || entry.name === basename(own)) continue;
    const path = join(dir, entry.name);
    try {
      const info = await Deno.lstat(path);
      if (!info.isDirectory || info.isSymlink || info.uid !== uid) continue;
      if (Date.now() - (info.mtime?.getTime() ?? 0) < FRESH_MS) continue;
      if (await inUse(path)) continue;
      await Deno.remove(path, { recursive: true });
      removed.push(path);
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
  return removed;
}

/** Whether a live run holds the lock of folder `path`. */
async function inUse(path: string): Promise<boolean> {
  const handle = await Deno.open(path, { read: true });
  try {
    return !(await handle.tryLock(true));
  } finally {
    handle.close();
  }
}
