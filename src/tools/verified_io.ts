/**
 * Opening and writing what `paths.ts` checked without being tricked by a swap in between: the
 * one place the file tools touch file contents.
 *
 * What is guaranteed. Deno 2.9.6 offers no `openat`, and drops `O_NOFOLLOW` whenever
 * permission checks are active, so a path is necessarily resolved again when it is opened. The
 * helpers therefore verify after the fact, before any byte is read or written, with
 * synchronous system calls run back to back (through `node:fs`, which gives descriptors and
 * `O_NONBLOCK`), so the window for a swap is microseconds, not an event-loop turn:
 *
 * - {@linkcode openVerified} opens the checked real path (non-blocking, so a FIFO swapped in
 *   cannot hang the call), then requires `fstat` of the descriptor to show the device and inode
 *   that `lstat` showed at the check, and the path to still be its own real path naming that
 *   inode. A symlink or another file swapped in at the file or at any parent folder between
 *   check and open yields a different inode, or a different real path, and is refused.
 * - {@linkcode writeFileVerified} never writes through an existing file: it creates a new
 *   temporary file (`O_CREAT | O_EXCL`, which never follows a symlink) in the checked folder,
 *   confirms that file is in that folder (same folder inode, symlink-free path) before writing
 *   the content, renames it over the target (the target entry is replaced, whatever it has
 *   become: a symlink or hard link swapped in is replaced, not followed) and confirms the
 *   result is where it was meant to be.
 *
 * What is not: swaps timed to the microsecond. A read escapes only if a parent folder is a
 * symlink to outside at the check's `lstat` and at the open, is a real folder again for the
 * confirming `realpath`, and a symlink again for the confirming `lstat` right after it. A write
 * can leave an empty temporary file in another folder the tool may write to (swap in between
 * the folder check and the create, swap back before the confirmation), or put its content
 * there when the swap lands inside the `rename` call, between its two path lookups (which
 * takes a one-call exchange such as `renameat2(RENAME_EXCHANGE)`); the confirmation after the
 * rename then reports the change but cannot undo it. Measured: a `renameat2(RENAME_EXCHANGE)`
 * loop gets `list`, `glob` and `grep` results from outside within seconds. So where bubblewrap
 * runs, the worker runs in a view holding only the workspace, the granted folders and what
 * Deno needs (src/sandbox/worker/view.ts): a race then reaches nothing outside, and these
 * checks are the second layer. Without bubblewrap they are the only one.
 */
import * as fs from "node:fs";
import { basename, dirname, join } from "node:path";
import { ToolError } from "../core/observation.ts";
import { type CheckedPath, isInside, isMissing } from "./paths.ts";

/** What the helpers need of a {@linkcode CheckedPath}. */
type Checked = Pick<CheckedPath, "path" | "real" | "info">;

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const CHUNK_BYTES = 64 * 1024;
/** Chunks streamed between two turns of the event loop (4 MiB). */
export const YIELD_EVERY_CHUNKS = 64;

/** A regular file opened by {@linkcode openVerified}; reads are positional, from the start. */
export class VerifiedFile implements Disposable {
  /** Absolute real path. */
  readonly path: string;
  /** Size in bytes when it was opened. */
  readonly size: number;
  #fd: number | null;

  constructor(path: string, fd: number, size: number) {
    this.path = path;
    this.#fd = fd;
    this.size = size;
  }

  /** At most `max` bytes from the start of the file. */
  head(max: number): Uint8Array {
    const buffer = new Uint8Array(max);
    let filled = 0;
    while (filled < max) {
      const n = fs.readSync(this.#open(), buffer, filled, max - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return buffer.subarray(0, filled);
  }

  /**
   * The content from the start, in chunks of at most `chunkBytes`. Every
   * {@linkcode YIELD_EVERY_CHUNKS} chunks it lets the event loop run, so timers (a timeout's
   * abort) fire while a large file streams.
   */
  async *chunks(chunkBytes = CHUNK_BYTES): AsyncGenerator<Uint8Array> {
    let count = 0;
    for (const chunk of this.#chunks(chunkBytes)) {
      if (++count % YIELD_EVERY_CHUNKS === 0) await new Promise((ok) => setTimeout(ok, 0));
      yield chunk;
    }
  }

  /** The whole content, read synchronously. */
  readAll(): Uint8Array {
    const parts = [...this.#chunks(Math.max(CHUNK_BYTES, this.size + 1))];
    if (parts.length === 1) return parts[0];
    const all = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      all.set(part, offset);
      offset += part.length;
    }
    return all;
  }

  /** Closes the file; later calls do nothing. */
  close(): void {
    if (this.#fd !== null) fs.closeSync(this.#fd);
    this.#fd = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  *#chunks(chunkBytes: number): Generator<Uint8Array> {
    for (let position = 0;;) {
      const buffer = new Uint8Array(chunkBytes);
      const n = fs.readSync(this.#open(), buffer, 0, chunkBytes, position);
      if (n === 0) return;
      position += n;
      yield buffer.subarray(0, n);
    }
  }

  #open(): number {
    if (this.#fd === null) throw new Deno.errors.BadResource(`File "${this.path}" is closed`);
    return this.#fd;
  }
}

/**
 * Opens the regular file `checked` names for reading and confirms it is the file that was
 * checked (see the module notes). Throws ToolError POLICY_DENIED `Path "…" changed while it
 * was being opened: …` when it is not, NOT_FOUND when it was removed meanwhile.
 */
export function openVerified(checked: Checked): VerifiedFile {
  const { path, real, info } = checked;
  if (!info?.isFile) throw new TypeError(`openVerified() needs a checked file, not "${path}"`);
  let fd: number;
  try {
    fd = fs.openSync(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw openError(error, path, "opened");
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || !sameFile(stat, info)) throw changed(path, "opened");
    confirmAt(real, stat, path, "opened");
    return new VerifiedFile(real, fd, stat.size);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/**
 * The content of the file at absolute `path`, a path found by walking the workspace (or a
 * granted root: `workspace` is whichever folder the walk stays in), opened with
 * {@linkcode openVerified}: it must be a regular file inside `workspace` at a path without
 * symlinks. Null when it is not, or cannot be read. Never throws.
 */
export function readFileVerified(workspace: string, path: string): Uint8Array | null {
  try {
    if (!isInside(workspace, path)) return null;
    const info = Deno.lstatSync(path);
    if (!info.isFile) return null;
    using file = openVerified({ path, real: path, info });
    return file.readAll();
  } catch {
    return null;
  }
}

/** Options for {@linkcode writeFileVerified}. */
export interface WriteOptions {
  /** Permission bits for the file; default 0o666 minus the umask (as a new file gets). */
  mode?: number;
}

/**
 * Replaces the file `checked` (from `checkPath(…, {forWrite: true})`) with `content` through a
 * temporary file in the same folder and a rename, confirming each step (see the module notes),
 * so readers never see a half-written file. The parent folder must exist. Throws ToolError
 * POLICY_DENIED `Path "…" changed while it was being written: …` when a step finds the folder
 * or the file is not what was checked.
 */
export function writeFileVerified(
  checked: Checked,
  content: string,
  options: WriteOptions = {},
): void {
  const { path, real } = checked;
  const dir = dirname(real);
  const folder = confirmDirectory(dir, path);
  const temp = join(dir, `.${basename(real)}.tern-${crypto.randomUUID().slice(0, 8)}.tmp`);
  let fd: number | null;
  try {
    fd = fs.openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, options.mode ?? 0o666);
  } catch (error) {
    throw openError(error, path, "written");
  }
  let renamed = false;
  try {
    const stat = fs.fstatSync(fd);
    confirmAt(temp, stat, path, "written");
    if (!sameFile(Deno.lstatSync(dir), folder)) throw changed(path, "written");
    fs.writeFileSync(fd, content);
    if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
    fs.closeSync(fd);
    fd = null;
    try {
      Deno.renameSync(temp, real);
    } catch (error) {
      throw isMissing(error) ? changed(path, "written") : error;
    }
    renamed = true;
    confirmAt(real, stat, path, "written");
  } catch (error) {
    if (fd !== null) fs.closeSync(fd);
    if (!renamed) removeSoon(temp);
    throw error;
  }
}

/**
 * Creates folder `dir` (absolute, real, inside `workspace`: the workspace, or the granted root
 * `checkPath` returned as `root`) and its missing parents one at a time, confirming each is a
 * real folder at a symlink-free path before creating inside it. `path` is the caller's path,
 * for messages. Throws Deno's NotADirectory or AlreadyExists when a parent is a file, and
 * ToolError POLICY_DENIED when a folder changed meanwhile.
 */
export function makeDirsVerified(workspace: string, dir: string, path: string): void {
  const missing: string[] = [];
  let existing = dir;
  while (isInside(workspace, existing) && lstatOrNull(existing) === null) {
    missing.push(existing);
    if (existing === workspace) break;
    existing = dirname(existing);
  }
  if (lstatOrNull(existing)?.isFile) {
    throw new Deno.errors.NotADirectory(`Cannot create a folder below file "${existing}"`);
  }
  if (missing.length === 0) return;
  confirmDirectory(existing, path);
  for (const folder of missing.reverse()) {
    Deno.mkdirSync(folder);
    try {
      confirmDirectory(folder, path);
    } catch (error) {
      try {
        Deno.removeSync(folder);
      } catch {
        // Best effort: the error that matters is already being thrown.
      }
      throw error;
    }
  }
}

interface Identity {
  dev: number;
  ino: number | null;
}

function sameFile(a: Identity, b: Identity): boolean {
  return a.ino !== null && a.dev === b.dev && a.ino === b.ino;
}

/** Throws "changed" unless `path` is still its own real path and names the file `id`. */
function confirmAt(path: string, id: Identity, shown: string, doing: string): void {
  const info = realPathOrNull(path) === path ? lstatOrNull(path) : null;
  if (info === null || !sameFile(info, id)) throw changed(shown, doing);
}

/** `lstat` of folder `dir`, which must be a folder at its own real path. */
function confirmDirectory(dir: string, shown: string): Deno.FileInfo {
  const info = lstatOrNull(dir);
  if (!info?.isDirectory || realPathOrNull(dir) !== dir) throw changed(shown, "written");
  return info;
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

function realPathOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** How often {@linkcode removeSoon} tries, 1 ms apart. */
const REMOVE_TRIES = 50;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Removes the temporary file at `path`, which this call created. A
 * failed step usually means a concurrent rename moved its folder away for a moment (a folder
 * swapped with a symlink and back), and then `path` leads elsewhere, where nothing has its
 * name (or into a read-only folder): so it tries again, whatever the error, up to
 * {@linkcode REMOVE_TRIES} times, until the path names it again. Its random name cannot name anything else. Never throws; best effort (a
 * folder moved for good keeps it, where it was moved to).
 */
function removeSoon(path: string): void {
  for (let tries = 0; tries < REMOVE_TRIES; tries++) {
    try {
      Deno.removeSync(path);
      return;
    } catch {
      // Not found, or "read-only file system" when the path leads into a read-only folder.
    }
    Atomics.wait(pause, 0, 0, 1);
  }
}

function changed(path: string, doing: string): ToolError {
  return new ToolError(
    "POLICY_DENIED",
    `Path "${path}" changed while it was being ${doing}: a symlink or another file was swapped in after it was checked`,
  );
}

/** Node-style open errors, as the tools report them. */
function openError(error: unknown, path: string, doing: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ELOOP") return changed(path, doing);
  if (code === "EACCES" || code === "EPERM") {
    return new ToolError("POLICY_DENIED", `Path "${path}" cannot be ${doing}: permission denied`);
  }
  if (code === "ENOENT" || code === "ENOTDIR") {
    const what = doing === "opened" ? "it" : "its folder";
    return new ToolError(
      "NOT_FOUND",
      `Path "${path}" not found: ${what} was removed after the check`,
    );
  }
  return error;
}
