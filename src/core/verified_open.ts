/**
 * Opening a checked regular file for reading without being tricked by a swap in between: the
 * open-then-verify step shared by the file tools (src/tools/verified_io.ts, whose notes say what
 * is and is not guaranteed) and by tern's own reads of workspace files
 * (src/config/workspace_file.ts). Lives in core so both layers can use it.
 */
import type * as NodeFs from "node:fs";
import { ToolError } from "./observation.ts";

/** What {@linkcode openVerified} needs: the path shown, its real path and its `lstat`. */
export interface CheckedFile {
  /** The path as the caller gave it, for messages. */
  path: string;
  /** Absolute real path. */
  real: string;
  /** `lstat` of `real` when it was checked. */
  info: Deno.FileInfo | null;
}

let nodeFs: typeof NodeFs | undefined;

/**
 * `node:fs`, loaded at the first open: it brings Deno's Node compatibility layer, which costs
 * about as much as Deno's own start (`bench/results/start_up.md`), and a run that reads no
 * workspace file before its first model request never needs it. `Deno.open` has no
 * `O_NOFOLLOW` or `O_NONBLOCK`, hence `node:fs`.
 */
function fs(): typeof NodeFs {
  return nodeFs ??= process.getBuiltinModule("node:fs");
}
const CHUNK_BYTES = 64 * 1024;
/** Chunks streamed between two turns of the event loop (4 MiB). */
export const YIELD_EVERY_CHUNKS = 64;

/** A regular file opened by {@linkcode openVerified}; reads are positional, from the start. */
export class VerifiedFile implements Disposable {
  /** Absolute real path. */
  readonly path: string;
  /** Size in bytes when it was opened. */
  readonly size: number;
  /** Hard links of the opened file (its `fstat` link count) when it was opened. */
  readonly links: number;
  #fd: number | null;

  constructor(path: string, fd: number, size: number, links = 1) {
    this.path = path;
    this.#fd = fd;
    this.size = size;
    this.links = links;
  }

  /** At most `max` bytes from the start of the file. */
  head(max: number): Uint8Array {
    const buffer = new Uint8Array(max);
    let filled = 0;
    while (filled < max) {
      const n = fs().readSync(this.#open(), buffer, filled, max - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return buffer.subarray(0, filled);
  }

  /**
   * The content from the start, in chunks of at most `chunkBytes`. Every
   * {@linkcode YIELD_EVERY_CHUNKS} chunks it lets the event loop run, so timers (a timeout's
   * abort) fire while a large file streams; with `signal`, it throws the signal's reason at the
   * first chunk after it fired, however the caller uses the chunks (a file of any size, or a
   * sparse one of terabytes, ends there).
   */
  async *chunks(chunkBytes = CHUNK_BYTES, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
    let count = 0;
    for (const chunk of this.#chunks(chunkBytes)) {
      if (++count % YIELD_EVERY_CHUNKS === 0) await new Promise((ok) => setTimeout(ok, 0));
      signal?.throwIfAborted();
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
    if (this.#fd !== null) fs().closeSync(this.#fd);
    this.#fd = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  *#chunks(chunkBytes: number): Generator<Uint8Array> {
    for (let position = 0;;) {
      const buffer = new Uint8Array(chunkBytes);
      const n = fs().readSync(this.#open(), buffer, 0, chunkBytes, position);
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
export function openVerified(checked: CheckedFile): VerifiedFile {
  const { path, real, info } = checked;
  if (!info?.isFile) throw new TypeError(`openVerified() needs a checked file, not "${path}"`);
  let fd: number;
  try {
    const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs().constants;
    fd = fs().openSync(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw openError(error, path, "opened");
  }
  try {
    const stat = fs().fstatSync(fd);
    if (!stat.isFile() || !sameFile(stat, info)) throw changed(path, "opened");
    confirmAt(real, stat, path, "opened");
    return new VerifiedFile(real, fd, stat.size, stat.nlink);
  } catch (error) {
    fs().closeSync(fd);
    throw error;
  }
}

/**
 * Opens `path` for reading, without blocking and without following a final symlink, and
 * returns it only when it is still the regular file `info` (its `lstat`) showed: a FIFO or a
 * symlink swapped in meanwhile is refused (null), not waited on or followed. Unlike
 * {@linkcode openVerified} the folders on the way are not confirmed, so it suits files whose
 * content is only ever used, never shown (a `.gitignore`'s patterns). Never throws.
 */
export function openUnchanged(path: string, info: Identity): VerifiedFile | null {
  let fd: number;
  try {
    const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs().constants;
    fd = fs().openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fs().fstatSync(fd);
    if (stat.isFile() && sameFile(stat, info)) return new VerifiedFile(path, fd, stat.size);
  } catch {
    // Treated as changed.
  }
  fs().closeSync(fd);
  return null;
}

/** Device and inode: what makes two `stat`s the same file. */
export interface Identity {
  dev: number;
  ino: number | null;
}

/** True when `a` and `b` are the same file (device and inode). */
export function sameFile(a: Identity, b: Identity): boolean {
  return a.ino !== null && a.dev === b.dev && a.ino === b.ino;
}

/** Throws "changed" unless `path` is still its own real path and names the file `id`. */
export function confirmAt(path: string, id: Identity, shown: string, doing: string): void {
  const info = realPathOrNull(path) === path ? lstatOrNull(path) : null;
  if (info === null || !sameFile(info, id)) throw changed(shown, doing);
}

/** `lstat` of folder `dir`, which must be a folder at its own real path. */
export function confirmDirectory(dir: string, shown: string): Deno.FileInfo {
  const info = lstatOrNull(dir);
  if (!info?.isDirectory || realPathOrNull(dir) !== dir) throw changed(shown, "written");
  return info;
}

/** `lstat` of `path`; null when it does not exist. */
export function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** The real path of `path`; null when it does not exist. */
export function realPathOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** The POLICY_DENIED error for a path that was swapped while being `doing` ("opened"). */
export function changed(path: string, doing: string): ToolError {
  return new ToolError(
    "POLICY_DENIED",
    `Path "${path}" changed while it was being ${doing}: a symlink or another file was swapped in after it was checked`,
  );
}

/** Node-style open errors, as the tools report them. */
export function openError(error: unknown, path: string, doing: string): unknown {
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

/** True for the errors of a path that does not exist (or has a file where a folder should be). */
export function isMissing(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
}
