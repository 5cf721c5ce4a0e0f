/**
 * What the search for `.git` folders (protected_paths.ts `gitDirsUnder`) keeps from one search
 * to the next. A sandbox repeats that search after every command that may have written, so a
 * repository a command made is protected from then on; in a workspace of tens of thousands of
 * entries, listing every folder again cost more than the command itself. A folder whose
 * identity and change time are what they were when it was read is not read again.
 *
 * Why that is safe against a command that wants a repository to go unseen: adding, removing or
 * renaming an entry sets the folder's change time (ctime) to now, and nothing without
 * `CAP_SYS_TIME` can set a ctime back (`touch -d` sets the mtime, and moves the ctime to now).
 * A folder is stat'ed before it is read, so a change while it is read shows as a new ctime next
 * time. Deno gives the ctime in whole seconds, and the kernel keeps it from a clock that may lag
 * a tick behind: a reading is kept only when the folder last changed at least
 * {@linkcode SETTLED_MS} before it was read, so a later change cannot carry the same ctime.
 * Folders that changed a moment ago (the ones commands are writing to) are always read again.
 */

/** How long before a reading a folder must have last changed for the reading to be kept. */
export const SETTLED_MS = 2_000;

/** An entry of a folder as the search needs it. */
export interface ListedEntry {
  name: string;
  isDirectory: boolean;
  isSymlink: boolean;
}

interface Kept {
  /** Device, inode and ctime of the folder when it was read. */
  id: string;
  value: unknown;
}

/** See the module's comment. One search at a time uses it. */
export class FolderListings {
  #kept = new Map<string, Kept>();
  #next = new Map<string, Kept>();
  readonly #now: () => number;
  /** Readings done from disk (not served from what was kept), for tests. */
  reads = 0;

  /** `now`: the clock the readings are timed by (milliseconds, default `Date.now`). */
  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Starts a search: what it does not look at again is dropped at {@linkcode end}. */
  begin(): void {
    this.#next = new Map();
  }

  /** Ends a search: keeps what it looked at, for the next. */
  end(): void {
    this.#kept = this.#next;
    this.#next = new Map();
  }

  /**
   * What `read(dir)` gives, from the last search when `dir` (followed if a link, as a listing
   * follows it) is the same folder and has not changed since; `kind` tells apart readings of
   * the same folder. A null reading is never kept. Never throws unless `read` does.
   */
  read<T>(kind: string, dir: string, read: () => T | null): T | null {
    const key = `${kind}\0${dir}`;
    const startedAt = this.#now();
    const id = folderId(dir);
    const kept = this.#kept.get(key);
    if (id !== null && kept?.id === id.id) {
      this.#next.set(key, kept);
      return kept.value as T;
    }
    this.reads++;
    const value = read();
    if (id !== null && value !== null && id.changedAt <= startedAt - SETTLED_MS) {
      this.#next.set(key, { id: id.id, value });
    }
    return value;
  }
}

function folderId(dir: string): { id: string; changedAt: number } | null {
  try {
    const info = Deno.statSync(dir);
    if (!info.isDirectory || info.ctime === null) return null;
    const changedAt = info.ctime.getTime();
    return { id: `${info.dev}:${info.ino}:${changedAt}`, changedAt };
  } catch {
    return null;
  }
}
