/**
 * The guards' mount points (empty `.git`/`.tern` folders bubblewrap mounts on, see runtime.ts)
 * noted in a folder of the user's beside the private tmp folders (`tern-mount-points-<uid>` in
 * the host's tmp, which commands never see: theirs is private): those a tern killed by SIGKILL
 * left in a workspace go at a later start. A folder goes only when the tern that made it has
 * ended, it is still the folder made (same device, inode and birth time) and empty, and no
 * running tern stands on it. A folder the person made, even an empty one, is never noted as
 * made, so never removed.
 */
import { join } from "../core/path.ts";

/**
 * One folder: made by this tern, or found and stood on. `born`: when it was made (its change
 * time where the file system keeps no birth time), as an inode number may be given again.
 */
type Mark = { path: string; dev: number; ino: number; born: number; made: boolean };
type Found = Omit<Mark, "made">;

/**
 * The notes' folder for private tmp folders in `tmpDir`: one file per sandbox runtime, in a
 * folder only this user may write (one another made is not used).
 */
export function guardNotesDir(tmpDir: string): string {
  return join(tmpDir, `tern-mount-points-${Deno.uid()}`);
}

/** True when `dir` is a folder (not a link) of this user's that no one else may write. */
function ownFolder(dir: string): boolean {
  try {
    const info = Deno.lstatSync(dir);
    return info.isDirectory && info.uid === Deno.uid() && ((info.mode ?? 0) & 0o022) === 0;
  } catch {
    return false;
  }
}

/** The mount points one sandbox runtime made or stands on, noted in a file of its own. */
export class GuardMarks {
  readonly #dir: string;
  readonly #file: string;
  readonly #marks = new Map<string, Mark>();
  /** The notes as last written; `null`: no file. */
  #written: string | null = null;

  /** `dir`: the notes' folder ({@linkcode guardNotesDir}). */
  constructor(dir: string) {
    const name = `${Deno.pid}-${startTime(Deno.pid)}-${crypto.randomUUID()}.json`;
    this.#dir = dir;
    this.#file = join(this.#dir, name);
  }

  /**
   * Notes each of `paths` that is an empty folder now, as made when `made` holds it. Written
   * before the folder is used. Never throws.
   */
  note(paths: readonly string[], made: ReadonlySet<string>): void {
    for (const path of paths) {
      const mark = emptyDirMark(path);
      if (mark === null) continue;
      const known = this.#marks.get(path);
      // A folder found again keeps "made" while it is the one made.
      const wasMade = known !== undefined && same(known, mark) && known.made;
      this.#marks.set(path, { ...mark, made: made.has(path) || wasMade });
    }
    this.#write();
  }

  /** Whether `path` is a folder this runtime made, still as made and empty. */
  made(path: string): boolean {
    const mark = this.#marks.get(path);
    return mark !== undefined && mark.made && sameDir(mark);
  }

  /**
   * Forgets every folder that is gone (or no longer empty), and with `closed` (the runtime
   * closed, no sandbox stands on any) those it only found. Never throws.
   */
  prune(options: { closed?: boolean } = {}): void {
    for (const [path, mark] of this.#marks) {
      if ((options.closed && !mark.made) || !sameDir(mark)) this.#marks.delete(path);
    }
    this.#write();
    // The folder too once it holds no note, when this runtime ends (not between commands).
    if (options.closed && this.#marks.size === 0) removeQuietly(this.#dir);
  }

  /** Writes the notes when they changed: commands one after another stand on the same. */
  #write(): void {
    const text = this.#marks.size === 0 ? null : JSON.stringify([...this.#marks.values()]);
    if (text === this.#written) return;
    if (text === null) {
      removeQuietly(this.#file);
      this.#written = null;
      return;
    }
    // Twice: another tern may remove the folder, empty, between the two steps.
    for (let tries = 0; tries < 2; tries++) {
      try {
        Deno.mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
        if (!ownFolder(this.#dir)) return;
        const temp = `${this.#file}.tmp`;
        Deno.writeTextFileSync(temp, text, { mode: 0o600 });
        Deno.renameSync(temp, this.#file);
        this.#written = text;
        return;
      } catch {
        // Not noted: such a folder is left, as before.
      }
    }
  }
}

/**
 * Removes (with `remove`, which never throws) the mount points that ended terns made and left
 * empty, unless a running tern stands on one, and their notes. Never throws.
 */
export async function removeLeftGuards(
  dir: string,
  remove: (paths: string[]) => Promise<void>,
): Promise<void> {
  if (!ownFolder(dir)) return;
  const ended: string[] = [];
  const held = new Set<string>();
  const left: Mark[] = [];
  try {
    for (const entry of Deno.readDirSync(dir)) {
      const owner = /^(\d+)-(\d+)-[\w-]+\.json$/.exec(entry.name);
      if (!entry.isFile || owner === null) continue;
      const marks = readMarks(join(dir, entry.name));
      if (startTime(Number(owner[1])) === Number(owner[2])) {
        for (const mark of marks) held.add(key(mark));
      } else {
        ended.push(join(dir, entry.name));
        left.push(...marks.filter((mark) => mark.made));
      }
    }
  } catch {
    return;
  }
  const gone = left.filter((mark) => !held.has(key(mark)) && sameDir(mark));
  if (gone.length > 0) await remove([...new Set(gone.map((mark) => mark.path))]);
  for (const file of ended) removeQuietly(file);
  removeQuietly(dir);
}

/** Removes a file or an empty folder; nothing when it cannot. */
function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Gone already, or a folder another tern still notes in.
  }
}

function readMarks(file: string): Mark[] {
  try {
    const value = JSON.parse(Deno.readTextFileSync(file));
    if (!Array.isArray(value)) return [];
    return value.filter((mark): mark is Mark =>
      typeof mark?.path === "string" && typeof mark.dev === "number" &&
      typeof mark.ino === "number" && typeof mark.born === "number" &&
      typeof mark.made === "boolean"
    );
  } catch {
    return [];
  }
}

/** True when `mark.path` is still the folder noted, and empty. */
function sameDir(mark: Mark): boolean {
  const now = emptyDirMark(mark.path);
  return now !== null && same(now, mark);
}

function same(a: Found, b: Found): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.born === b.born;
}

function key(mark: Found): string {
  return `${mark.dev}:${mark.ino}:${mark.born}`;
}

function emptyDirMark(path: string): Found | null {
  try {
    const info = Deno.lstatSync(path);
    const born = (info.birthtime ?? info.ctime)?.getTime();
    if (!info.isDirectory || info.ino === null || born === undefined) return null;
    for (const _ of Deno.readDirSync(path)) return null;
    return { path, dev: info.dev, ino: info.ino, born };
  } catch {
    return null;
  }
}

/** When process `pid` started (clock ticks after boot); -1 when there is no such process. */
function startTime(pid: number): number {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The fields after the command, which is in parentheses and may hold any character.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[19]);
  } catch {
    return -1;
  }
}
