/**
 * The only code that writes session files. Each entry is one line written whole by one loop of
 * `writeSync` on a file opened for appending, so a process killed mid-write leaves at most one
 * torn last line, which the loader skips and the next append steps over with a "\n".
 *
 * Lock: the writer holds an exclusive `flock` on the session file itself (no `.lock` file to
 * go stale). The kernel drops it when the file is closed or the process dies, even by SIGKILL.
 * Readers (`loadSession`, listing, fork) never lock: a session in use can still be read.
 */
import { uniqueHexId } from "../core/ids.ts";
import { isAbsolute, join } from "../core/path.ts";
import {
  asSessionWriteError,
  EntryTooLongError,
  SessionBusyError,
  SessionFileError,
  SessionRefError,
} from "./errors.ts";
import { type LoadedSession, loadSession } from "./load.ts";
import { notOwnSessionError, sessionFileName, sessionFolder, sessionsRoot } from "./paths.ts";
import { makeRealFolder, openRegularFile, openRegularFileSync } from "./regular_file.ts";
import { MAX_LINE_BYTES } from "./_lines.ts";
import {
  type NewEntry,
  SESSION_FORMAT_VERSION,
  type SessionEntry,
  type SessionHeader,
} from "./types.ts";

/** What a new session file's header records besides the generated id and time. */
export interface CreateSessionOptions {
  /** The workspace (absolute real path). */
  cwd: string;
  ternVersion: string;
  /** Where a forked session came from. */
  parent?: SessionHeader["parent"];
  /** A subagent's session: the parent that spawned it. */
  subagentOf?: SessionHeader["subagentOf"];
  /** The session id (a UUID) chosen by the caller; default a random one. */
  id?: string;
  /** The project file that chose the model server, when one did (SessionHeader). */
  serverChosenBy?: string;
  /**
   * Write the file under a name that no listing or look-up finds (`.<name>.draft`) until
   * {@linkcode SessionWriter.publish}: a fork copied in many writes, which a kill or Ctrl-C may
   * cut off, must never become the newest session (`tern run -c`) with part of its history.
   */
  draft?: boolean;
}

/** A set of ids that is only asked whether it holds one. */
type OtherIds = Pick<ReadonlySet<string>, "has">;

const encoder = new TextEncoder();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Appends entries to one session file while holding its lock. */
export class SessionWriter {
  readonly #file: Deno.FsFile;
  #path: string;
  /** The folders `create` made for the file, outermost first: a discarded session leaves none. */
  madeFolders: readonly string[] = [];
  /** A draft's session file name, given by `publish()`. */
  #publishAs: string | undefined;
  readonly #header: SessionHeader;
  readonly #ids: Set<string>;
  /** The ids of the entries in lines not read (a session read from its end). */
  readonly #otherIds: OtherIds;
  #leafId: string | null;
  /** The file does not end in "\n" (a torn line or a failed write): start the next line anew. */
  #needsNewline: boolean;
  #closed = false;

  private constructor(
    file: Deno.FsFile,
    path: string,
    header: SessionHeader,
    entries: readonly SessionEntry[],
    needsNewline: boolean,
    otherIds: OtherIds = { has: () => false },
  ) {
    this.#file = file;
    this.#path = path;
    this.#header = header;
    this.#ids = new Set(entries.map((entry) => entry.id));
    this.#otherIds = otherIds;
    this.#leafId = entries.at(-1)?.id ?? null;
    this.#needsNewline = needsNewline;
  }

  /**
   * Creates `<ternHome>/sessions/<encoded cwd>/<timestamp>_<id>.jsonl` (folders 0700, file 0600)
   * with its header line, locked for this writer. The id is a random UUID.
   */
  static create(ternHome: string, options: CreateSessionOptions): SessionWriter {
    if (!isAbsolute(options.cwd)) {
      throw new TypeError(`Cannot create a session for "${options.cwd}": not an absolute path`);
    }
    if (options.id !== undefined && !UUID.test(options.id)) {
      throw new TypeError(`Cannot create session "${options.id}": the id is not a UUID`);
    }
    const created = new Date();
    const header: SessionHeader = {
      type: "session",
      version: SESSION_FORMAT_VERSION,
      id: options.id ?? crypto.randomUUID(),
      cwd: options.cwd,
      created: created.toISOString(),
      ternVersion: options.ternVersion,
    };
    if (options.parent) header.parent = options.parent;
    if (options.subagentOf) header.subagentOf = options.subagentOf;
    if (options.serverChosenBy) header.serverChosenBy = options.serverChosenBy;
    const folder = sessionFolder(ternHome, options.cwd);
    // Synchronous on purpose: this is on the way to the first model request, and each async
    // file operation costs a thread hand-off the sync one does not (bench/results/code_costs.md).
    const name = sessionFileName(created, header.id);
    const path = join(folder, options.draft ? `.${name}.draft` : name);
    let file: Deno.FsFile;
    let made: string[];
    try {
      made = makeRealFolder(folder, sessionsRoot(ternHome));
      if (options.draft) removeCutOffDrafts(folder);
      file = Deno.openSync(path, { append: true, createNew: true, mode: 0o600 });
    } catch (error) {
      throw asSessionWriteError(path, error);
    }
    const writer = new SessionWriter(file, path, header, [], false);
    writer.madeFolders = made;
    if (options.draft) writer.#publishAs = join(folder, name);
    try {
      writer.#lock();
      writer.#writeLine(JSON.stringify(header));
    } catch (error) {
      writer.close();
      // A file without its header would be the latest session, one no command can read.
      try {
        Deno.removeSync(path);
      } catch {
        // Left as it is: loading it says it is not a session.
      }
      throw error;
    }
    return writer;
  }

  /**
   * Locks and loads the session at `path` for appending after its last entry; `load` (default
   * `loadSession`) reads it once locked.
   * @throws {SessionBusyError} when another writer holds the session, {SessionRefError} when
   * the file is missing, a SessionFileError when the file is not a session (see
   * `loadSession`), is a link or not a regular file, or tern may not write it, a
   * SessionWriteError when its file system is read-only.
   */
  static async open(
    path: string,
    options: { load?: (path: string) => Promise<LoadedSession> } = {},
  ): Promise<{ writer: SessionWriter; loaded: LoadedSession }> {
    let file: Deno.FsFile;
    try {
      file = await openRegularFile(path, { append: true });
    } catch (error) {
      throw openError(path, error);
    }
    try {
      // Lock before reading, so that no other writer can append between the load and ours.
      if (!file.tryLockSync(true)) throw inUseError(path);
      const loaded = await (options.load ?? loadSession)(path);
      const writer = new SessionWriter(
        file,
        path,
        loaded.header,
        loaded.entries,
        !loaded.endsWithNewline,
        loaded.otherIds,
      );
      return { writer, loaded };
    } catch (error) {
      file.close();
      throw error;
    }
  }

  /** The session file. */
  get path(): string {
    return this.#path;
  }

  /** The header line as written or read. */
  get header(): SessionHeader {
    return this.#header;
  }

  /** The id of the last entry written or loaded: where the next append goes by default. */
  get leafId(): string | null {
    return this.#leafId;
  }

  /**
   * Writes `entry` as one line and makes it the leaf. Fills in a new 8-hex `id`, the
   * `timestamp` and `parentId` (default: the leaf; pass `null` for a new root). Synchronous,
   * so entries land in call order.
   * @throws {RangeError} when `parentId` names no entry of this session, a SessionWriteError
   * when the disk is full (then nothing was written but perhaps part of the line).
   */
  append(entry: NewEntry, options: { parentId?: string | null } = {}): SessionEntry {
    const parentId = options.parentId === undefined ? this.#leafId : options.parentId;
    if (parentId !== null && !this.#ids.has(parentId) && !this.#otherIds.has(parentId)) {
      throw new RangeError(
        `Cannot append to session "${this.#header.id}": no entry "${parentId}" to go under`,
      );
    }
    const { type, ...fields } = entry;
    const full = {
      type,
      id: this.#newId(),
      parentId,
      timestamp: new Date().toISOString(),
      ...fields,
    } as SessionEntry;
    this.#writeLine(JSON.stringify(full));
    this.#ids.add(full.id);
    this.#leafId = full.id;
    return full;
  }

  /**
   * Writes an entry copied from another session as it is (fork), unknown fields and types
   * included, and makes it the leaf. @throws {TypeError} when it has no string `id`, or
   * {@linkcode RangeError} when the id is already in this session.
   */
  appendRaw(raw: Record<string, unknown>): void {
    const id = raw.id;
    if (typeof id !== "string") throw new TypeError('Cannot copy an entry without a string "id"');
    if (this.#ids.has(id) || this.#otherIds.has(id)) {
      throw new RangeError(`Cannot copy entry "${id}": session "${this.#header.id}" has it`);
    }
    this.#writeLine(JSON.stringify(raw));
    this.#ids.add(id);
    this.#leafId = id;
  }

  /**
   * Gives a draft (`CreateSessionOptions.draft`) its session file name, with every line written
   * so far: from now on it is listed and found. Nothing for a session that is not a draft.
   * @throws {SessionWriteError} when the file system refuses the rename.
   */
  publish(): void {
    if (this.#publishAs === undefined) return;
    try {
      Deno.renameSync(this.#path, this.#publishAs);
    } catch (error) {
      throw asSessionWriteError(this.#publishAs, error);
    }
    this.#path = this.#publishAs;
    this.#publishAs = undefined;
  }

  /** Closes the file, which releases the lock. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#file.close();
  }

  #lock(): void {
    // Only reached for a file this process just created; nobody else can know its name yet.
    if (!this.#file.tryLockSync(true)) throw new Error(`Cannot lock new session "${this.#path}"`);
  }

  #newId(): string {
    for (;;) {
      const id = uniqueHexId(this.#ids);
      if (!this.#otherIds.has(id)) return id;
    }
  }

  /**
   * One line, encoded first and written whole; a failure leaves the next line to start anew.
   * @throws {EntryTooLongError} when the line would be past `MAX_LINE_BYTES` (nothing written).
   */
  #writeLine(json: string): void {
    if (this.#closed) {
      throw new Error(`Cannot write to session "${this.#header.id}": the writer is closed`);
    }
    const ascii = json.replace(NON_ASCII, escapeChar);
    if (ascii.length > MAX_LINE_BYTES) {
      throw new EntryTooLongError(
        `Cannot write to session "${this.#path}": the entry's line would be ${ascii.length} ` +
          `bytes, more than the ${MAX_LINE_BYTES} a session reader takes`,
        this.#path,
      );
    }
    const bytes = encoder.encode(this.#needsNewline ? `\n${ascii}\n` : `${ascii}\n`);
    try {
      let written = 0;
      while (written < bytes.length) written += this.#file.writeSync(bytes.subarray(written));
    } catch (error) {
      this.#needsNewline = true;
      throw asSessionWriteError(this.#path, error);
    }
    this.#needsNewline = false;
  }
}

/**
 * Characters outside ASCII, written as JSON `\\uXXXX` escapes: every line of a session file is
 * ASCII, so a reader decodes it into a one-byte string, half the memory of a two-byte one.
 */
const NON_ASCII = /[\u0080-\uffff]/g;

function escapeChar(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** A draft's file name (`CreateSessionOptions.draft`). */
const DRAFT_NAME = /^\.\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[^/]+\.jsonl\.draft$/;
/** How long a draft stays unchanged before it counts as cut off (a fork writes it throughout). */
const DRAFT_STALE_MS = 60_000;

/**
 * Removes the drafts in `folder` that forks cut off left (a kill, Ctrl-C): each unchanged for
 * a minute and locked by no process. Never throws: one left is removed by a later fork.
 */
function removeCutOffDrafts(folder: string): void {
  try {
    for (const entry of Deno.readDirSync(folder)) {
      if (!entry.isFile || !DRAFT_NAME.test(entry.name)) continue;
      const path = join(folder, entry.name);
      try {
        using file = openRegularFileSync(path, { read: true, what: "session draft" });
        const changed = file.statSync().mtime?.getTime() ?? 0;
        if (Date.now() - changed < DRAFT_STALE_MS || !file.tryLockSync(true)) continue;
        Deno.removeSync(path);
      } catch {
        // Gone, or not ours to remove.
      }
    }
  } catch {
    // The folder cannot be read: nothing to remove.
  }
}

/** The "in use" error, naming the session by the id in its file name. */
function inUseError(path: string): SessionBusyError {
  return new SessionBusyError(path.match(/_([^_/]+)\.jsonl$/)?.[1] ?? path, path);
}

/** Why the session file at `path` cannot be opened for appending, for the person. */
function openError(path: string, error: unknown): unknown {
  if (error instanceof Deno.errors.NotFound) {
    return new SessionRefError(`Cannot open session "${path}": file not found`, path, {
      cause: error,
    });
  }
  // NotCapable: outside the folders tern's own permissions let it write (bin/_env.sh). A file
  // from elsewhere is not tern's: `sessions fork` imports its conversation without what it
  // would grant (fork.ts), where copying it into TERN_HOME would make tern obey all of it.
  if (error instanceof Deno.errors.NotCapable) return notOwnSessionError(path, error);
  if (error instanceof Deno.errors.PermissionDenied) {
    return new SessionFileError(
      `Cannot continue session "${path}": permission denied to write the file`,
      path,
      { cause: error },
    );
  }
  return asSessionWriteError(path, error);
}
