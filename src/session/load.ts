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

/**
 * Reads and parses the session file at `path`, a line at a time.
 * @throws {SessionFileError} when the file is missing, its first line is not a session header,
 * or two entries share an id (see {@linkcode repeatedIdError}).
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
  readonly #warnings: string[] = [];
  /** The line each entry's id was read on. */
  readonly #lineOf = new Map<string, number>();

  constructor(path: string) {
    this.#path = path;
  }

  readonly onLine = (line: Uint8Array, lineNumber: number): void => {
    if (lineNumber === 1) {
      this.#header = parseSessionHeader(decoder.decode(line), this.#path);
      const warning = newerVersionWarning(this.#header, this.#path);
      if (warning) this.#warnings.push(warning);
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
    return {
      header,
      entries: this.#entries,
      warnings: this.#warnings,
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
 * One entry line → the entry, or undefined after pushing a warning that names the line as
 * `where` (`line 3 of "<path>"`). Never throws.
 */
export function parseEntryLine(
  line: string,
  where: string,
  warnings: string[],
): SessionEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    warnings.push(`Skipped ${where}: not complete JSON (a write was cut off)`);
    return undefined;
  }
  if (!isRecord(value)) {
    warnings.push(`Skipped ${where}: not a JSON object`);
    return undefined;
  }
  const { id, timestamp } = value;
  if (typeof id !== "string" || typeof timestamp !== "string") {
    warnings.push(`Skipped ${where}: no string "id" and "timestamp"`);
    return undefined;
  }
  if (value.parentId !== null && typeof value.parentId !== "string") {
    warnings.push(`Entry "${id}" on ${where} has no string or null "parentId": read as a root`);
    value.parentId = null;
  }
  const parentId = value.parentId as string | null;
  if (typeof value.type === "string" && KNOWN_ENTRY_TYPES.has(value.type)) {
    if (value.type === "message") repairArguments(value.message);
    const bad = badEntryField(value.type, value);
    if (bad === undefined) return value as unknown as SessionEntry;
    warnings.push(
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
