/**
 * Reads a file line by line through one reused buffer. Session files reach tens of megabytes,
 * and fresh memory is what costs most here: reading the whole file and decoding it into one
 * string touches two or three times its size, while a line at a time touches about one.
 */
import { openRegularFile, openRegularFileSync } from "./regular_file.ts";

/**
 * Called with each line's bytes, without the "\n" (only valid during the call), and its
 * 1-based number. Return false to stop reading.
 */
export type LineHandler = (line: Uint8Array, lineNumber: number) => boolean | void;

/** What a scan saw besides the lines. */
export interface LineScan {
  /** The file's size in bytes (when it was opened). */
  size: number;
  /**
   * The last byte read was "\n": false for an empty file, a cut-off last line, or a scan the
   * handler stopped early.
   */
  endsWithNewline: boolean;
}

const NEWLINE = 10;
const CHUNK = 1 << 20;
/**
 * The longest line handed out whole (64 MiB): tern writes none near it (a message past the
 * model's window is refused, tool results and summaries are capped, images live in files of
 * their own). Of a longer line, from a damaged or hand-made file, only its first
 * {@linkcode OVERLONG_HEAD} bytes are handed out, which no JSON reader takes for an entry: it
 * is skipped as damaged instead of filling memory (a 400 MB line ran tern out of it).
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** How much of a line past {@linkcode MAX_LINE_BYTES} is handed out: its first 4 KiB. */
export const OVERLONG_HEAD = 4096;

/** Feeds chunks in, hands complete lines out; the bytes after the last "\n" wait for more. */
class LineSplitter {
  readonly #onLine: LineHandler;
  #pending: Uint8Array[] = [];
  #pendingLength = 0;
  #lineNumber = 0;
  #lastByte = -1;
  /** The line being read is past MAX_LINE_BYTES: `#pending` holds its head, the rest is dropped. */
  #overlong = false;

  constructor(onLine: LineHandler) {
    this.#onLine = onLine;
  }

  /** Returns false when the handler asked to stop. */
  push(chunk: Uint8Array): boolean {
    if (chunk.length === 0) return true;
    this.#lastByte = chunk[chunk.length - 1];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (!this.#emit(chunk.subarray(start, end))) return false;
      start = end + 1;
    }
    if (start < chunk.length && !this.#overlong) {
      this.#pending.push(chunk.slice(start));
      this.#pendingLength += chunk.length - start;
      if (this.#pendingLength > MAX_LINE_BYTES) this.#keepHead();
    }
    return true;
  }

  /** The line is past MAX_LINE_BYTES: only its first OVERLONG_HEAD bytes are kept. */
  #keepHead(): void {
    const head = new Uint8Array(Math.min(OVERLONG_HEAD, this.#pendingLength));
    let filled = 0;
    for (const part of this.#pending) {
      if (filled === head.length) break;
      const piece = part.subarray(0, head.length - filled);
      head.set(piece, filled);
      filled += piece.length;
    }
    this.#pending = [head];
    this.#pendingLength = head.length;
    this.#overlong = true;
  }

  /** Hands out a last line that has no "\n". */
  finish(size: number): LineScan {
    if (this.#pendingLength > 0) this.#emit(new Uint8Array(0));
    return { size, endsWithNewline: this.#lastByte === NEWLINE };
  }

  #emit(tail: Uint8Array): boolean {
    // An overlong line's end is dropped with the rest of it.
    if (!this.#overlong && this.#pendingLength + tail.length > MAX_LINE_BYTES) {
      this.#keepHead();
    }
    const line = this.#joined(this.#overlong ? new Uint8Array(0) : tail);
    this.#pending = [];
    this.#pendingLength = 0;
    this.#overlong = false;
    return this.#onLine(line, ++this.#lineNumber) !== false;
  }

  /** The pending bytes followed by `tail`, as one array. */
  #joined(tail: Uint8Array): Uint8Array {
    if (this.#pendingLength === 0) return tail;
    const line = new Uint8Array(this.#pendingLength + tail.length);
    let offset = 0;
    for (const part of this.#pending) {
      line.set(part, offset);
      offset += part.length;
    }
    line.set(tail, offset);
    return line;
  }
}

/**
 * Reads the file at `path` and calls `onLine` for each line, the last one even without a
 * final "\n". `chunkSize` (default 1 MiB) caps the read buffer. Throws what
 * `openRegularFile` throws (a SessionFileError for a link, FIFO or device).
 */
export async function scanLines(
  path: string,
  onLine: LineHandler,
  options: { chunkSize?: number } = {},
): Promise<LineScan> {
  using file = await openRegularFile(path, { read: true });
  const size = (await file.stat()).size;
  const buffer = new Uint8Array(Math.max(1, Math.min(options.chunkSize ?? CHUNK, size + 1)));
  const splitter = new LineSplitter(onLine);
  for (;;) {
    const read = await file.read(buffer);
    if (read === null) break;
    if (!splitter.push(buffer.subarray(0, read))) return { size, endsWithNewline: false };
  }
  return splitter.finish(size);
}

/**
 * `scanLines()` without awaiting, over the first `end` bytes only (default: the whole file);
 * for reading what lies before a part already read. Throws what `openRegularFileSync` throws.
 */
export function scanLinesSync(
  path: string,
  onLine: LineHandler,
  options: { end?: number } = {},
): LineScan {
  using file = openRegularFileSync(path, { read: true });
  const size = Math.min(file.statSync().size, options.end ?? Infinity);
  const buffer = new Uint8Array(Math.max(1, Math.min(CHUNK, size + 1)));
  const splitter = new LineSplitter(onLine);
  for (let at = 0; at < size;) {
    const read = file.readSync(buffer.subarray(0, Math.min(buffer.length, size - at)));
    if (read === null || read === 0) break;
    at += read;
    if (!splitter.push(buffer.subarray(0, read))) return { size, endsWithNewline: false };
  }
  return splitter.finish(size);
}
