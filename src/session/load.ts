/**
 * Reading a session file: the header, then every entry that survived, with a warning for each
 * line that did not. Loading never changes the file.
 */
import { badEntryField, badHeaderField } from "./_entry_shape.ts";
import { SessionFileError } from "./errors.ts";
import { visibleText } from "../core/terminal_text.ts";
import {
  KNOWN_ENTRY_TYPES,
  SESSION_FORMAT_VERSION,
  type SessionEntry,
  type SessionHeader,
} from "./types.ts";
import { type LineScan, scanLines, scanLinesSync } from "./_lines.ts";

/** A session file as read. */
export interface LoadedSession {
  header: SessionHeader;
  /** Entries in file order; the last one is the leaf. Unknown types come as `UnknownEntry`. */
  entries: SessionEntry[];
  /** One sentence per skipped line or oddity (newer format, bad `parentId`), for a person. */
  warnings: string[];
  /**
   * False when the file does not end in "\n" (a write was cut off): the next append must
   * start with "\n" so that it begins on a fresh line.
   */
  endsWithNewline: boolean;
  /**
   * When `entries` are not all the file holds (it was read from its end, `tail.ts`): the ids of
   * the entries not read, which new entries must not reuse.
   */
  otherIds?: Pick<ReadonlySet<string>, "has">;
}

const decoder = new TextDecoder();

/** The most lines of one file warned about one by one: the rest are counted in one warning. */
const MAX_LINE_WARNINGS = 100;

/**
 * The most lines that are not complete JSON a session file may hold. tern leaves at most one
 * per kill (the write it cut off); a file of many more is not one tern wrote, and each such
 * line costs a thrown parse error: a 10 MB file of five million of them took 99 seconds and
 * 3.5 GB to show, and a larger one ran tern out of memory.
 */
export const MAX_TORN_LINES = 1000;

/**
 * The warnings about one file's lines: the first {@linkcode MAX_LINE_WARNINGS} as they are,
 * then one that counts the rest, so a file of millions of bad lines is not millions of
 * warnings in memory and on the screen.
 */
export class LineWarnings {
  readonly #path: string;
  readonly #list: string[] = [];
  #more = 0;
  #torn = 0;

  constructor(path: string) {
    this.#path = path;
  }

  /** Adds one warning (counted only, past the first {@linkcode MAX_LINE_WARNINGS}). */
  add(text: string): void {
    if (this.#list.length < MAX_LINE_WARNINGS) this.#list.push(text);
    else this.#more++;
  }

  /**
   * Warns of a line at `where` that is not complete JSON.
   * @throws {SessionFileError} past {@linkcode MAX_TORN_LINES} of them.
   */
  torn(where: string): void {
    if (++this.#torn > MAX_TORN_LINES) {
      throw new SessionFileError(
        `Cannot load session "${this.#path}": more than ${MAX_TORN_LINES} of its lines are ` +
          "not complete JSON: it is not a session file tern wrote (a kill cuts off at most " +
          "the one line being written)",
        this.#path,
      );
    }
    this.add(`Skipped ${where}: not complete JSON (a write was cut off)`);
  }

  /**
   * The warnings in the order added (`reversed`: the other way, for a reader going from the
   * end), then the count of those left out.
   */
  list(options: { reversed?: boolean } = {}): string[] {
    const list = options.reversed ? this.#list.toReversed() : [...this.#list];
    if (this.#more > 0) {
      list.push(`${this.#more} more warnings about the lines of "${this.#path}" not shown`);
    }
    return list;
  }
}

/**
 * Reads and parses the session file at `path`, a line at a time.
 * @throws {SessionFileError} when the file is missing, its first line is not a session header,
 * two entries share an id (see {@linkcode repeatedIdError}), or more than
 * {@linkcode MAX_TORN_LINES} lines are not complete JSON.
 */
export async function loadSession(path: string): Promise<LoadedSession> {
  const reader = new SessionReader(path);
  try {
    return reader.finish(await scanLines(path, reader.onLine));
  } catch (error) {
    throw readError(path, error);
  }
}

/**
 * The entries in the first `end` bytes of the session file at `path` (whole lines only), read
 * without awaiting: what a session opened from its end (`tail.ts`) reads when it needs more.
 * @throws {SessionFileError} as `loadSession` does.
 */
export function loadSessionSync(path: string, options: { end: number }): LoadedSession {
  const reader = new SessionReader(path);
  try {
    return reader.finish(scanLinesSync(path, reader.onLine, options));
  } catch (error) {
    throw readError(path, error);
  }
}

/** Collects the header, entries and warnings from the lines of one file. */
class SessionReader {
  readonly #path: string;
  #header: SessionHeader | undefined;
  readonly #entries: SessionEntry[] = [];
  readonly #warnings: LineWarnings;
  /** The line each entry's id was read on. */
  readonly #lineOf = new Map<string, number>();

  constructor(path: string) {
    this.#path = path;
    this.#warnings = new LineWarnings(path);
  }

  readonly onLine = (line: Uint8Array, lineNumber: number): void => {
    if (lineNumber === 1) {
      this.#header = parseSessionHeader(decoder.decode(line), this.#path);
      const warning = newerVersionWarning(this.#header, this.#path);
      if (warning) this.#warnings.add(warning);
    } else if (line.length > 0) {
      const where = `line ${lineNumber} of "${this.#path}"`;
      const entry = parseEntryLine(decoder.decode(line), where, this.#warnings);
      if (!entry) return;
      const earlier = this.#lineOf.get(entry.id);
      if (earlier !== undefined) {
        throw repeatedIdError(this.#path, entry.id, `line ${lineNumber}`, `line ${earlier}`);
      }
      this.#lineOf.set(entry.id, lineNumber);
      this.#entries.push(entry);
    }
  };

  finish(scan: LineScan): LoadedSession {
    const header = this.#header ?? parseSessionHeader("", this.#path);
    const where = (entry: SessionEntry) => `line ${this.#lineOf.get(entry.id)} of "${this.#path}"`;
    rootLaterParents(this.#entries, this.#warnings, where);
    return {
      header,
      entries: this.#entries,
      warnings: this.#warnings.list(),
      endsWithNewline: scan.endsWithNewline,
    };
  }
}

/**
 * The error for two entries that share an id, found at `where` and `earlier` (`line 4`). Which
 * of them an id means would differ between readers (the tree keeps the first, the reader from
 * the end the last), so what a person is shown could differ from what a model continues from:
 * tern never writes such a file, and refuses one.
 */
export function repeatedIdError(
  path: string,
  id: string,
  where: string,
  earlier: string,
): SessionFileError {
  return new SessionFileError(
    `Cannot load session "${path}": entry id "${visibleText(id.slice(0, 64))}" on ${where} ` +
      `is already the id of ${earlier}`,
    path,
  );
}

/** The warning for a header of a newer format version than this tern's; undefined if none. */
export function newerVersionWarning(header: SessionHeader, path: string): string | undefined {
  if (header.version <= SESSION_FORMAT_VERSION) return undefined;
  return `Session "${path}" has format version ${header.version}, newer than this ` +
    `tern reads (${SESSION_FORMAT_VERSION}): entries of unknown types are kept but ignored`;
}

/**
 * Parses the first line of a session file. Requires `type: "session"`, a numeric `version`
 * and string `id`, `cwd` and `created`, and its other fields (`parent`, `subagentOf`) absent or
 * of their shape; a newer version is accepted (the caller warns).
 * @throws {SessionFileError} naming `path` when the line is not such a header.
 */
export function parseSessionHeader(line: string, path: string): SessionHeader {
  const fail = (why: string) =>
    new SessionFileError(
      `Cannot load session "${path}": the first line is not a session header (${why})`,
      path,
    );
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw fail(line.length === 0 ? "the file is empty" : "not complete JSON");
  }
  if (!isRecord(value) || value.type !== "session") throw fail('no "type": "session"');
  if (typeof value.version !== "number") throw fail('no numeric "version"');
  for (const key of ["id", "cwd", "created"]) {
    if (typeof value[key] !== "string") throw fail(`no string "${key}"`);
  }
  const bad = badHeaderField(value);
  if (bad !== undefined) throw fail(`"${bad}" is malformed`);
  return value as unknown as SessionHeader;
}

/**
 * Makes a root of each of `entries` (in file order) whose parent is itself or an entry after it,
 * with a warning naming its line (`where`). tern writes each parent before its children, and
 * `SessionTree` reads such a link as none: so does every walk along `parentId` (a resume's, a
 * turn's), or one edited into a file would take a resume along a path `tern sessions show` never
 * shows. A parent not among `entries` is left as it is (it may be in lines not read).
 */
export function rootLaterParents(
  entries: readonly SessionEntry[],
  warnings: LineWarnings,
  where: (entry: SessionEntry) => string,
): void {
  const position = new Map<string, number>();
  entries.forEach((entry, i) => {
    if (!position.has(entry.id)) position.set(entry.id, i);
  });
  entries.forEach((entry, i) => {
    const parent = entry.parentId === null ? undefined : position.get(entry.parentId);
    if (parent === undefined || parent < i) return;
    warnings.add(
      `Entry "${shortId(entry.id)}" on ${where(entry)} has parent ` +
        `"${shortId(entry.parentId!)}", which is not an earlier entry: read as a root`,
    );
    entry.parentId = null;
  });
}

/** An id from a file, for a warning: its first 64 characters. */
function shortId(id: string): string {
  return id.length <= 64 ? id : `${id.slice(0, 64)}…`;
}

/**
 * One entry line → the entry, or undefined after adding a warning that names the line as
 * `where` (`line 3 of "<path>"`).
 * @throws {SessionFileError} past {@linkcode MAX_TORN_LINES} lines that are not complete JSON.
 */
export function parseEntryLine(
  line: string,
  where: string,
  warnings: LineWarnings,
): SessionEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    warnings.torn(where);
    return undefined;
  }
  if (!isRecord(value)) {
    warnings.add(`Skipped ${where}: not a JSON object`);
    return undefined;
  }
  const { id, timestamp } = value;
  if (typeof id !== "string" || typeof timestamp !== "string") {
    warnings.add(`Skipped ${where}: no string "id" and "timestamp"`);
    return undefined;
  }
  if (value.parentId !== null && typeof value.parentId !== "string") {
    warnings.add(
      `Entry "${shortId(id)}" on ${where} has no string or null "parentId": read as a root`,
    );
    value.parentId = null;
  }
  const parentId = value.parentId as string | null;
  if (typeof value.type === "string" && KNOWN_ENTRY_TYPES.has(value.type)) {
    if (value.type === "message") repairArguments(value.message);
    const bad = badEntryField(value.type, value);
    if (bad === undefined) return value as unknown as SessionEntry;
    warnings.add(
      `Skipped ${where}: a "${value.type}" entry whose "${bad}" is missing or malformed`,
    );
    return undefined;
  }
  return { type: "unknown", id, parentId, timestamp, raw: value };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readError(path: string, error: unknown): unknown {
  if (error instanceof Deno.errors.NotFound) {
    return new SessionFileError(`Cannot load session "${path}": file not found`, path, {
      cause: error,
    });
  }
  return error;
}

/**
 * A tool call whose `arguments` an earlier tern saved as an object (a server sent it so; the
 * wire now turns it into JSON text) gets them as JSON text: skipping the line would cut the
 * history before it off the path.
 */
function repairArguments(message: unknown): void {
  if (typeof message !== "object" || message === null) return;
  const calls = (message as { toolCalls?: unknown }).toolCalls;
  if (!Array.isArray(calls)) return;
  for (const call of calls) {
    if (typeof call !== "object" || call === null) continue;
    const args = (call as { arguments?: unknown }).arguments;
    if (typeof args === "object" && args !== null) {
      (call as { arguments: string }).arguments = JSON.stringify(args);
    }
  }
}
