/**
 * The guards' mount points (empty `.git`/`.tern` folders bubblewrap mounts on, see runtime.ts)
 * noted in a folder of the user's beside the private tmp folders (`tern-mount-points-<uid>` in
 * the host's tmp, which commands never see: theirs is private): those a tern killed by SIGKILL
 * left in a workspace go at a later start. A folder goes only when the tern that made it has
 * ended, it is still the folder made (same device, inode and birth time) and empty, and no
 * running tern stands on it. A folder the person made, even an empty one, is never noted as
 * made, so never removed.
 *
 * Terns sharing a workspace (two sessions, or one server's) share its mount points, and removing
 * a folder another tern's sandbox has mounted on takes the guard away inside that sandbox (the
 * kernel detaches a mount whose folder is removed in another mount namespace): a command there
 * could then make `.git` or `.tern`. So standing on the folders (made or found, then noted) and
 * removing them happen under one lock, the notes' folder's `.lock`, and a removal skips every
 * folder another running tern notes; a tern that ends while others stand on its folders leaves
 * its notes, for whoever ends or starts next.
 */
import { join } from "../core/path.ts";
import { TernError } from "../core/errors.ts";
import { sameFile } from "../core/verified_open.ts";

/**
 * One folder: made by this tern, or found and stood on. `born`: when it was made (its change
 * time where the file system keeps no birth time), as an inode number may be given again.
 */
type Mark = { path: string; dev: number; ino: number; born: number; made: boolean };
type Found = Omit<Mark, "made">;

/** The lock file in the notes' folder (see the module's note). */
const LOCK = ".lock";

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

/**
 * The mount points one sandbox runtime made or stands on, noted in a file of its own, which it
 * keeps open with a shared lock while it runs: a file no one holds so is an ended tern's (its
 * process killed or not; Deno reads no other process's `/proc` entries without every
 * permission, so that is how a running tern is told). Every step that reads or writes the notes
 * or makes or removes a mount point holds the notes' folder's lock.
 */
export class GuardMarks {
  readonly #dir: string;
  readonly #file: string;
  readonly #marks = new Map<string, Mark>();
  /** The notes as last written; `null`: no file. */
  #written: string | null = null;
  /** The notes' file, open with a shared lock from the first note until they are removed. */
  #notes: Deno.FsFile | null = null;

  readonly #waitMs: number;

  /**
   * `dir`: the notes' folder ({@linkcode guardNotesDir}); `waitMs`: how long to wait for its
   * lock ({@linkcode LOCK_WAIT_MS}).
   */
  constructor(dir: string, waitMs = LOCK_WAIT_MS) {
    this.#dir = dir;
    this.#file = join(this.#dir, `${crypto.randomUUID()}.json`);
    this.#waitMs = waitMs;
  }

  /**
   * Makes (with `make`) the absent ones of `paths` and notes each that is an empty folder then,
   * as made when this made it; returns those made. Written before a sandbox stands on them.
   * Without the lock (a folder of the notes that is not this user's own) it goes on all the
   * same: the guards must stand.
   * @throws {GuardLockBusyError} when another tern held the lock all the time it waited (one
   * stopped mid-step: going on unnoted, its removal could take this sandbox's guards away).
   * Otherwise only what `make` throws.
   */
  async standOn(
    paths: readonly string[],
    make: (absent: string[]) => Promise<void>,
  ): Promise<string[]> {
    const lock = await takeLock(this.#dir, this.#waitMs);
    try {
      const absent = paths.filter((path) => infoOrNull(path) === null);
      await make(absent);
      for (const path of paths) {
        const mark = emptyDirMark(path);
        if (mark === null) continue;
        const known = this.#marks.get(path);
        // A folder found again keeps "made" while it is the one made.
        const wasMade = known !== undefined && same(known, mark) && known.made;
        this.#marks.set(path, { ...mark, made: absent.includes(path) || wasMade });
      }
      this.#write();
      return absent;
    } finally {
      lock?.close();
    }
  }

  /**
   * Removes (with `remove`) those of `paths` that are empty folders no other running tern
   * notes, then forgets every folder gone; none without the lock (left for a later sweep).
   * Never throws unless `remove` does.
   */
  async remove(
    paths: readonly string[],
    remove: (paths: string[]) => Promise<void>,
  ): Promise<void> {
    const lock = await takeLock(this.#dir, this.#waitMs).catch(quietWhenBusy);
    if (lock === null) return;
    try {
      const held = heldBy(this.#dir, (file) => file !== this.#file);
      const free = paths.filter((path) => {
        const mark = emptyDirMark(path);
        return mark !== null && !held.has(key(mark));
      });
      if (free.length > 0) await remove(free);
      this.#prune(false);
    } finally {
      lock.close();
    }
  }

  /**
   * After the runtime closed (no sandbox of its stands on any): forgets what it only found, and
   * leaves noted, as an ended tern's for whoever sweeps next, the folders it made that are still
   * there (another tern stands on them). The notes' folder goes when it holds no note. Never
   * throws.
   */
  async close(): Promise<void> {
    const lock = await takeLock(this.#dir, this.#waitMs).catch(quietWhenBusy);
    if (lock === null && this.#notes !== null) {
      // Left as an ended tern's notes (no lock to write them under): the next sweep's.
      this.#notes.close();
      this.#notes = null;
      return;
    }
    try {
      this.#prune(true);
      this.#notes?.close();
      this.#notes = null;
      if (lock !== null) removeUnusedFolder(this.#dir);
    } finally {
      lock?.close();
    }
  }

  /** Whether `path` is a folder this runtime made, still as made and empty. */
  made(path: string): boolean {
    const mark = this.#marks.get(path);
    return mark !== undefined && mark.made && sameDir(mark);
  }

  /** Forgets every folder that is gone (or no longer empty), and with `closed` those found. */
  #prune(closed: boolean): void {
    for (const [path, mark] of this.#marks) {
      if ((closed && !mark.made) || !sameDir(mark)) this.#marks.delete(path);
    }
    this.#write();
  }

  /** Writes the notes when they changed: commands one after another stand on the same. */
  #write(): void {
    const text = this.#marks.size === 0 ? null : JSON.stringify([...this.#marks.values()]);
    if (text === this.#written) return;
    if (text === null) {
      removeQuietly(this.#file);
      this.#notes?.close();
      this.#notes = null;
      this.#written = null;
      return;
    }
    try {
      if (this.#notes === null) {
        Deno.mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
        if (!ownFolder(this.#dir)) return;
        const file = Deno.openSync(this.#file, { write: true, createNew: true, mode: 0o600 });
        if (!file.tryLockSync(false)) {
          file.close();
          return;
        }
        this.#notes = file;
      }
      // In place (readers hold the folder's lock): a new file would drop the lock.
      const bytes = new TextEncoder().encode(text);
      this.#notes.truncateSync(0);
      // From the start: truncating leaves the offset where the last write ended.
      this.#notes.seekSync(0, Deno.SeekMode.Start);
      for (let done = 0; done < bytes.length;) {
        done += this.#notes.writeSync(bytes.subarray(done));
      }
      this.#written = text;
    } catch {
      // Not noted: such a folder is left, as before.
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
  waitMs = LOCK_WAIT_MS,
): Promise<void> {
  if (!ownFolder(dir)) return;
  const lock = await takeLock(dir, waitMs).catch(quietWhenBusy);
  if (lock === null) return;
  try {
    const held = heldBy(dir, () => true);
    const ended = noteFiles(dir).filter((file) => !file.running).map((file) => file.path);
    const left = ended.flatMap((file) => readMarks(file).filter((mark) => mark.made));
    const gone = left.filter((mark) => !held.has(key(mark)) && sameDir(mark));
    if (gone.length > 0) await remove([...new Set(gone.map((mark) => mark.path))]);
    // A note stays while its folder does (`remove` may have failed): a later sweep tries again.
    for (const file of ended) {
      if (!readMarks(file).some((mark) => mark.made && sameDir(mark))) removeQuietly(file);
    }
    removeUnusedFolder(dir);
  } finally {
    lock.close();
  }
}

/** The notes in `dir`, and whether the tern that wrote each still runs. */
function noteFiles(dir: string): { path: string; running: boolean }[] {
  const files: { path: string; running: boolean }[] = [];
  try {
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isFile || !NOTES_NAME.test(entry.name)) continue;
      const path = join(dir, entry.name);
      files.push({ path, running: held(path) });
    }
  } catch {
    // No notes.
  }
  return files;
}

/** A runtime's notes' file name. */
const NOTES_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json$/;

/** True while a tern holds the lock of the notes `path` (or it cannot be told). */
function held(path: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    // Gone: ended. Not to be read: taken as running, so nothing it notes is removed.
    return !(error instanceof Deno.errors.NotFound);
  }
  try {
    if (!file.tryLockSync(true)) return true;
    file.unlockSync();
    return false;
  } catch {
    return true;
  } finally {
    file.close();
  }
}

/** The folders that running terns (those of whose notes files `which` holds) stand on. */
function heldBy(dir: string, which: (file: string) => boolean): Set<string> {
  const held = new Set<string>();
  for (const file of noteFiles(dir)) {
    if (!file.running || !which(file.path)) continue;
    for (const mark of readMarks(file.path)) held.add(key(mark));
  }
  return held;
}

/**
 * How long a tern waits for the notes' lock, in milliseconds. A holder keeps it for a few file
 * operations and at most one `mkdir` or `rmdir` process, so a wait this long means a holder that
 * does not run (a tern stopped with Ctrl-Z or SIGSTOP mid-step).
 */
export const LOCK_WAIT_MS = 15_000;

/** Another tern held the guards' notes' lock all the time this one waited. */
export class GuardLockBusyError extends TernError {
  constructor(lock: string, waitMs: number) {
    super(
      `Cannot run the command: another tern has held "${lock}" for over ${
        Math.round(waitMs / 1000)
      } s, so the sandbox's guard folders cannot be set up safely. A tern stopped mid-step ` +
        "(Ctrl-Z or SIGSTOP) holds it: resume it (fg, or kill -CONT) or end it, then try again",
    );
    this.name = "GuardLockBusyError";
  }
}

/** For the steps that may be skipped: no lock when another tern holds it too long. */
function quietWhenBusy(error: unknown): null {
  if (error instanceof GuardLockBusyError) return null;
  throw error;
}

/**
 * The notes' lock, held (`flock`) until the file is closed; null when the folder is not this
 * user's own or the lock cannot be had. One removed while this tern waited is taken again.
 * @throws {GuardLockBusyError} when another tern held it for all of `waitMs`.
 */
async function takeLock(dir: string, waitMs: number): Promise<Deno.FsFile | null> {
  const path = join(dir, LOCK);
  const deadline = performance.now() + waitMs;
  for (let tries = 0; tries < 3; tries++) {
    let file: Deno.FsFile;
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (!ownFolder(dir)) return null;
      file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
    } catch {
      continue;
    }
    let locked = false;
    try {
      locked = await lockBefore(file, deadline);
      const now = infoOrNull(path);
      if (locked && now !== null && now.isFile && sameFile(file.statSync(), now)) return file;
    } catch {
      // Taken again below.
    }
    file.close();
    if (!locked && performance.now() >= deadline) throw new GuardLockBusyError(path, waitMs);
  }
  return null;
}

/**
 * Takes `file`'s exclusive lock, polling, until `deadline` (`performance.now()`); false when
 * the time ran out. Polled, not a blocking `lock()`: that call cannot be given up, and its file
 * would take the lock later, for no one.
 */
async function lockBefore(file: Deno.FsFile, deadline: number): Promise<boolean> {
  for (let pause = 1;; pause = Math.min(pause * 2, 20)) {
    if (file.tryLockSync(true)) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Removes the notes' folder and its lock when it holds no note (call with the lock held). */
function removeUnusedFolder(dir: string): void {
  try {
    for (const entry of Deno.readDirSync(dir)) if (entry.name !== LOCK) return;
  } catch {
    return;
  }
  removeQuietly(join(dir, LOCK));
  removeQuietly(dir);
}

/** `lstat` of `path`; null when it cannot be had. */
function infoOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
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
