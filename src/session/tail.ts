/**
 * Reading a session from its end. Resuming needs the path to the leaf only back to its last
 * usable compaction: one that carries a checkpoint (the settings replayed so far) and whose kept
 * entries (from `firstKeptId` on) are reached without crossing another compaction. Replay from
 * there equals replay from the root (see `Replayer`), so the lines before are not read at all,
 * and resuming costs the same however much history lies before the compaction.
 *
 * Nothing here trusts anything but the file: the path is followed through the `parentId` of the
 * lines themselves, and the entry an id resolves to is its last line in the file, as `Session`
 * resolves it after reading the whole file.
 */
import {
  LineWarnings,
  type LoadedSession,
  newerVersionWarning,
  parseEntryLine,
  parseSessionHeader,
  rootLaterParents,
} from "./load.ts";
import { MAX_LINE_BYTES, OVERLONG_HEAD } from "./_lines.ts";
import { openRegularFileSync } from "./regular_file.ts";
import { isCheckpoint } from "./replay.ts";
import type { CompactionEntry, SessionEntry } from "./types.ts";

/** A session read from `start` (a byte offset, at a line start) to its end. */
export interface LoadedTail extends LoadedSession {
  /** Where the first line of `entries` starts; lines before it were not read. */
  start: number;
  /** Where the first entry line starts (just after the header). */
  headerEnd: number;
  /** The path to the leaf from the first entry replay needs (the whole path when it has no anchor). */
  path: SessionEntry[];
  /** Where the line of each of `entries` starts, in the same order. */
  entryStarts: number[];
  /**
   * Two entries read share an id: the file is not to be continued from its end (read whole,
   * `loadSession` refuses it naming both lines).
   */
  repeatsAnId: boolean;
}

const NEWLINE = 10;
const CHUNK = 256 * 1024;
const decoder = new TextDecoder();

/**
 * Reads the session file at `path` backwards from its end until the leaf's path reaches an
 * anchor (see above) or its root. A line longer than `maxLineBytes` (default 64 MiB, as the
 * whole-file reader `_lines.ts` takes) is never put together: only its first bytes are kept
 * and handed to the parser, which skips it as damaged with the warning `loadSession` gives, so
 * a cut-off line of hundreds of megabytes costs no more memory than a short one. `chunkSize`
 * (default 256 KiB) and `maxLineBytes` are for tests.
 * @throws {SessionFileError} when the first line is not a session header, the file is not a
 * regular file or more than `MAX_TORN_LINES` lines read are not complete JSON; what
 * `Deno.openSync` throws.
 */
export function loadTail(
  path: string,
  options: { chunkSize?: number; maxLineBytes?: number } = {},
): LoadedTail {
  using file = openRegularFileSync(path, { read: true });
  const size = file.statSync().size;
  const maxLine = Math.max(1, options.maxLineBytes ?? MAX_LINE_BYTES);
  const { header, headerEnd } = readHeader(file, path, size, maxLine);
  const walk = new PathWalk();
  const entries: SessionEntry[] = [];
  const entryStarts: number[] = [];
  const warnings = new LineWarnings(path);
  const ids = new Set<string>();
  let repeatsAnId = false;
  const take = (line: Uint8Array, start: number): boolean => {
    if (line.length === 0) return false;
    const entry = parseEntryLine(
      decoder.decode(line),
      `the line at byte ${start} of "${path}"`,
      warnings,
    );
    if (!entry) return false;
    if (ids.has(entry.id)) repeatsAnId = true;
    ids.add(entry.id);
    entries.push(entry);
    entryStarts.push(start);
    return walk.add(entry);
  };
  let start = headerEnd;
  const chunkSize = Math.max(1, options.chunkSize ?? CHUNK);
  const buffer = new Uint8Array(Math.min(chunkSize, Math.max(1, size - headerEnd)));
  /** The line being assembled, which began in a chunk not read yet. */
  const pending = new LineFromEnd(maxLine);
  let done = false;
  for (let end = size; end > headerEnd && !done;) {
    const from = Math.max(headerEnd, end - buffer.length);
    const chunk = readAt(file, buffer, from, end - from);
    let lineEnd = chunk.length;
    const newlines = newlinesIn(chunk);
    for (let i = newlines.length - 1; i >= 0; i--) {
      const nl = newlines[i];
      if (take(pending.finish(chunk.subarray(nl + 1, lineEnd)), from + nl + 1)) {
        start = from + nl + 1;
        done = true;
        break;
      }
      lineEnd = nl;
    }
    if (!done) pending.prepend(chunk.subarray(0, lineEnd));
    end = from;
  }
  if (!done) take(pending.finish(new Uint8Array(0)), headerEnd);
  entries.reverse();
  entryStarts.reverse();
  // Links to a later line are none, as the walk took them (PathWalk.add).
  const links = new LineWarnings(path);
  const startOf = new Map(entries.map((entry, i) => [entry, entryStarts[i]]));
  rootLaterParents(
    entries,
    links,
    (entry) => `the line at byte ${startOf.get(entry)} of "${path}"`,
  );
  const newer = newerVersionWarning(header, path);
  return {
    header,
    entries,
    warnings: [...newer ? [newer] : [], ...warnings.list({ reversed: true }), ...links.list()],
    endsWithNewline: size > 0 && lastByte(file, size) === NEWLINE,
    start,
    headerEnd,
    path: walk.path.reverse(),
    entryStarts,
    repeatsAnId,
  };
}

/** Follows the leaf's path back through entries handed in from the end of the file. */
class PathWalk {
  /** The path so far, leaf first. */
  readonly path: SessionEntry[] = [];
  /** Each id's last entry in the file (the first one seen going back). */
  readonly #byId = new Map<string, SessionEntry>();
  readonly #seen = new Set<string>();
  /** The next id on the path; undefined before the first entry (the leaf) is seen. */
  #wanted: string | undefined;
  /** The compaction whose kept entries the walk is looking for. */
  #anchor: CompactionEntry | undefined;

  /** Takes the entry before those handed in so far; true when the walk is complete. */
  add(entry: SessionEntry): boolean {
    if (!this.#byId.has(entry.id)) this.#byId.set(entry.id, entry);
    this.#wanted ??= entry.id;
    for (let next = this.#byId.get(this.#wanted); next; next = this.#byId.get(this.#wanted)) {
      if (this.#seen.has(next.id)) return true;
      this.#seen.add(next.id);
      this.path.push(next);
      if (next.type === "compaction") {
        this.#anchor = isCheckpoint(next.checkpoint) ? next : undefined;
        if (this.#anchor?.firstKeptId === null) return true;
      } else if (this.#anchor && next.id === this.#anchor.firstKeptId) {
        return true;
      }
      // A parent already read is on a later line (or is the entry itself): the link is none,
      // as loadSession and SessionTree read it (rootLaterParents).
      if (next.parentId === null || this.#byId.has(next.parentId)) return true;
      this.#wanted = next.parentId;
    }
    return false;
  }
}

/**
 * The header and where the line after it starts. A first line past `maxLine` bytes is read as
 * its first bytes only, as `_lines.ts` reads it (which no JSON reader takes for a header).
 */
function readHeader(
  file: Deno.FsFile,
  path: string,
  size: number,
  maxLine: number,
): { header: ReturnType<typeof parseSessionHeader>; headerEnd: number } {
  const line = new LineFromStart(maxLine);
  const buffer = new Uint8Array(4096);
  for (let at = 0; at < size;) {
    const chunk = readAt(file, buffer, at, Math.min(buffer.length, size - at));
    const nl = chunk.indexOf(NEWLINE);
    if (nl !== -1) {
      line.append(chunk.subarray(0, nl));
      return {
        header: parseSessionHeader(decoder.decode(line.bytes()), path),
        headerEnd: at + nl + 1,
      };
    }
    line.append(chunk);
    at += chunk.length;
  }
  return { header: parseSessionHeader(decoder.decode(line.bytes()), path), headerEnd: size };
}

/**
 * A line read from its start, up to `max` bytes; of a longer one only the first
 * {@linkcode OVERLONG_HEAD} bytes (at most `max`) are kept.
 */
class LineFromStart {
  readonly #max: number;
  #parts: Uint8Array[] = [];
  #length = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** Adds `piece` (copied: it may be a view of a reused buffer) after what is held. */
  append(piece: Uint8Array): void {
    this.#length += piece.length;
    if (this.#length <= this.#max) {
      this.#parts.push(piece.slice());
    } else {
      const size = Math.min(OVERLONG_HEAD, this.#max);
      this.#parts = [headOf(new Uint8Array(0), [...this.#parts, piece], size)];
    }
  }

  /** The line (the head of an overlong one). */
  bytes(): Uint8Array {
    return joined(new Uint8Array(0), this.#parts);
  }
}

/**
 * A line read from its end backwards, in pieces. Up to `max` bytes it is kept whole; past them
 * only its first {@linkcode OVERLONG_HEAD} bytes (at most `max`) are, which is all the parser
 * then sees, as with `_lines.ts`: a line past the limit is damaged, and skipped.
 */
class LineFromEnd {
  readonly #max: number;
  readonly #headSize: number;
  /** The bytes held, in order: the whole line so far, or the head of an overlong one. */
  #parts: Uint8Array[] = [];
  /** The length of the line so far, bytes not kept included. */
  #length = 0;

  constructor(max: number) {
    this.#max = max;
    this.#headSize = Math.min(OVERLONG_HEAD, max);
  }

  /** Puts `piece` before what is held (copied when kept: it may be a view of a reused buffer). */
  prepend(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.#length += piece.length;
    this.#parts = this.#length <= this.#max
      ? [piece.slice(), ...this.#parts]
      : [headOf(piece, this.#parts, this.#headSize)];
  }

  /**
   * The line once `first`, its first bytes, is put before the rest: the whole line (`first`
   * itself when nothing is held), or the head of an overlong one. Empties the holder.
   */
  finish(first: Uint8Array): Uint8Array {
    const length = this.#length + first.length;
    const line = length <= this.#max
      ? joined(first, this.#parts)
      : headOf(first, this.#parts, this.#headSize);
    this.#parts = [];
    this.#length = 0;
    return line;
  }
}

/** The first `size` bytes of `first` followed by `rest`, as a new array. */
function headOf(first: Uint8Array, rest: readonly Uint8Array[], size: number): Uint8Array {
  const head = new Uint8Array(
    Math.min(size, rest.reduce((sum, part) => sum + part.length, first.length)),
  );
  let filled = 0;
  for (const part of [first, ...rest]) {
    if (filled === head.length) break;
    const piece = part.subarray(0, head.length - filled);
    head.set(piece, filled);
    filled += piece.length;
  }
  return head;
}

/**
 * The offsets of the "\n" bytes in `chunk`, in order (found forwards: V8's `indexOf` on a byte
 * array is a fast search, its `lastIndexOf` a loop a hundred times slower).
 */
function newlinesIn(chunk: Uint8Array): number[] {
  const offsets: number[] = [];
  for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) {
    offsets.push(at);
  }
  return offsets;
}

/** `length` bytes of `file` from `offset`, read into `buffer`. */
function readAt(file: Deno.FsFile, buffer: Uint8Array, offset: number, length: number): Uint8Array {
  file.seekSync(offset, Deno.SeekMode.Start);
  let read = 0;
  while (read < length) {
    const n = file.readSync(buffer.subarray(read, length));
    if (n === null || n === 0) break;
    read += n;
  }
  return buffer.subarray(0, read);
}

function lastByte(file: Deno.FsFile, size: number): number {
  return readAt(file, new Uint8Array(1), size - 1, 1)[0];
}

/** `head` followed by `rest` as one array (`head` itself when `rest` is empty). */
function joined(head: Uint8Array, rest: readonly Uint8Array[]): Uint8Array {
  if (rest.length === 0) return head;
  const out = new Uint8Array(rest.reduce((sum, part) => sum + part.length, head.length));
  out.set(head, 0);
  let offset = head.length;
  for (const part of rest) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
