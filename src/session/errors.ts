/** Errors of the session store that the person can act on; all of them are bad usage. */
import { TernError } from "../core/errors.ts";
import { visibleText } from "../core/terminal_text.ts";

/** Another tern process holds the session's lock. */
export class SessionBusyError extends TernError {
  override name = "SessionBusyError";
  /** The session's id (from its file name) and its file. */
  readonly sessionId: string;
  readonly path: string;

  constructor(sessionId: string, path: string) {
    super(
      `Session "${sessionId}" is in use by another tern process (${path}): wait for it to ` +
        `finish, or fork it with \`tern sessions fork ${sessionId}\``,
    );
    this.sessionId = sessionId;
    this.path = path;
  }
}

/**
 * A session reference (a path, an id or an id prefix) that names no session, too little of an
 * id, or more than one session.
 */
export class SessionRefError extends TernError {
  override name = "SessionRefError";
  /** The reference as given. */
  readonly ref: string;
  /** The files of the sessions it matched: empty when it matched none. */
  readonly matches: readonly string[];

  constructor(message: string, ref: string, options: { matches?: string[]; cause?: unknown } = {}) {
    super(message, "cause" in options ? { cause: options.cause } : {});
    this.ref = ref;
    this.matches = options.matches ?? [];
  }
}

/** A file given as a session that is missing or whose first line is not a session header. */
export class SessionFileError extends TernError {
  override name = "SessionFileError";
  /** The file, as given. */
  readonly path: string;

  constructor(message: string, path: string, options: { cause?: unknown } = {}) {
    super(message, "cause" in options ? { cause: options.cause } : {});
    this.path = path;
  }
}

/** A session has no entry with the id asked for (to branch or fork from). */
export class UnknownEntryError extends TernError {
  override name = "UnknownEntryError";
  readonly sessionId: string;
  readonly entryId: string;

  constructor(sessionId: string, entryId: string) {
    // The session id may be a file's from anywhere (`tern sessions fork ./shared.jsonl`).
    const session = visibleText(sessionId);
    super(
      `Session "${session}" has no entry "${visibleText(entryId)}": see ` +
        `\`tern sessions tree ${session}\``,
    );
    this.sessionId = sessionId;
    this.entryId = entryId;
  }
}

/**
 * The storage refused a session file's write: the disk is full, a quota is used up or the file
 * system is read-only. Not bad usage: the same command works once there is room.
 */
export class SessionWriteError extends TernError {
  override name = "SessionWriteError";
  /** The session file. */
  readonly path: string;

  constructor(message: string, path: string, options: { cause?: unknown } = {}) {
    super(message, "cause" in options ? { cause: options.cause } : {});
    this.path = path;
  }
}

/**
 * An entry whose line would be longer than a session reader takes whole (`MAX_LINE_BYTES`):
 * not written, since every reader would skip it, and the entries written under it would lose
 * their path to everything before (a compaction's checkpoint of a plan whose steps each answered
 * megabytes made the resume forget the whole conversation).
 */
export class EntryTooLongError extends SessionWriteError {
  override name = "EntryTooLongError";
}

/** What to do when the storage refuses a write, by the error's `code`. */
const STORAGE_ERRORS: Record<string, string> = {
  ENOSPC: "the disk is full: free some space, then continue the session",
  EDQUOT: "the disk quota is used up: free some space, then continue the session",
  EROFS: "the file system is read-only: set TERN_HOME to a folder tern can write",
};

/**
 * `error` as a SessionWriteError when the storage refused a write of `path` (ENOSPC, EDQUOT,
 * EROFS), else `error` itself.
 */
export function asSessionWriteError(path: string, error: unknown): unknown {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== "string" || !Object.hasOwn(STORAGE_ERRORS, code)) return error;
  return new SessionWriteError(
    `Cannot write session "${path}" (${code}): ${STORAGE_ERRORS[code]}`,
    path,
    { cause: error },
  );
}
