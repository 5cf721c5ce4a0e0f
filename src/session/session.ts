/**
 * An open session: the writer (which holds the file's lock), every entry by id, and the leaf.
 * Appends go under the leaf; `branchFrom` moves the leaf by appending a `branch` entry under an
 * older entry, so old lines are never touched. `state()` is the replayed state at the leaf,
 * kept up to date by appends: only opening and moving the leaf replay a path.
 */
import { EntryTooLongError, UnknownEntryError } from "./errors.ts";
import { openCallsAtLeaf } from "./dangling.ts";
import { type Opened, openForResume, pathTo, UnreadIds } from "./_open.ts";
import { writeIdIndex } from "./id_index.ts";
import { LineWarnings, loadSessionSync, rootLaterParents } from "./load.ts";
import { Replayer, type ReplayState } from "./replay.ts";
import { SessionWriter } from "./store.ts";
import { removeEmptyFolders } from "./regular_file.ts";
import { ancestors } from "./tree.ts";
import {
  type BranchEntry,
  KNOWN_ENTRY_TYPES,
  type NewEntry,
  type SessionEntry,
  type SessionHeader,
} from "./types.ts";

/** How a session is opened besides its path. */
export interface SessionOptions {
  /** Called each time the session replays a path from its start (opening, moving the leaf). */
  onReplay?: (entries: number) => void;
}

export class Session {
  readonly #writer: SessionWriter;
  #entries: SessionEntry[];
  readonly #byId = new Map<string, SessionEntry>();
  /** False while the lines before `#start` are unread (the session was opened from its end). */
  #complete: boolean;
  readonly #start: number;
  /** The ids of the lines before `#start`. */
  readonly #unread: UnreadIds;
  /** A `subagent` entry was read or appended. */
  #subagents = false;
  /**
   * Whether the lines before `#start` hold a `subagent` entry: false when a compaction read says
   * none lay before it, undefined when nothing read says (see {@linkcode hasSubagentEntries}).
   */
  readonly #unreadSubagents: false | undefined;
  /** The state at the leaf, kept up to date as entries are appended. */
  #replayer = new Replayer();
  readonly #onReplay?: (entries: number) => void;
  /** The session has a compaction to resume from, so an id index is worth keeping. */
  #wantsIndex: boolean;
  /** The id index on disk is out of date. */
  #indexStale: boolean;
  #closed = false;
  /** Made by this process ({@linkcode Session.create}), not opened from a file already there. */
  #made = false;
  /** What each new entry goes through before it is written (see {@linkcode maskEntries}). */
  #mask: ((entry: NewEntry) => NewEntry) | undefined;
  /** Problems found while loading (torn lines, unknown versions), for the person to see. */
  readonly warnings: readonly string[];

  private constructor(writer: SessionWriter, opened: Opened, options: SessionOptions) {
    this.#writer = writer;
    this.#entries = [...opened.loaded.entries];
    for (const entry of this.#entries) {
      this.#byId.set(entry.id, entry);
      if (entry.type === "subagent") this.#subagents = true;
    }
    this.#complete = opened.complete;
    // Every line read was written after every line left unread, so one compaction read that
    // saw no subagent entry before it speaks for all of them.
    this.#unreadSubagents = opened.complete ||
        this.#entries.some((entry) =>
          entry.type === "compaction" && entry.subagentsBefore === false
        )
      ? false
      : undefined;
    this.#start = opened.start;
    this.#unread = opened.unread;
    this.#onReplay = options.onReplay;
    this.#indexStale = !opened.indexed;
    this.#wantsIndex = !opened.complete ||
      this.#entries.some((entry) => entry.type === "compaction" && entry.checkpoint);
    this.warnings = [...opened.loaded.warnings];
    this.#replay(opened.path);
  }

  /** Starts a new session file for `cwd` under `ternHome`. */
  static create(
    ternHome: string,
    options: {
      cwd: string;
      ternVersion: string;
      parent?: SessionHeader["parent"];
      subagentOf?: SessionHeader["subagentOf"];
      id?: string;
      serverChosenBy?: string;
      /** Not listed or found until {@linkcode Session.publish} (`CreateSessionOptions`). */
      draft?: boolean;
    } & SessionOptions,
  ): Session {
    const writer = SessionWriter.create(ternHome, options);
    const loaded = { header: writer.header, entries: [], warnings: [], endsWithNewline: true };
    const session = new Session(
      writer,
      { loaded, start: 0, path: [], complete: true, indexed: false, unread: new UnreadIds() },
      options,
    );
    session.#made = true;
    return session;
  }

  /**
   * Opens an existing session for appending (to continue it). It is read from its end back to
   * the last compaction on the path to the leaf when it can be (`tail.ts`), so resuming does not
   * take longer for history before it; what lies before is read when something asks for it.
   * Tool calls left without results at the leaf (tern was killed while they ran) are closed
   * first: an "interrupted" tool message is appended for each. @throws {SessionBusyError} when
   * another process holds it, a SessionFileError when the file is not a session.
   */
  static async open(path: string, options: SessionOptions = {}): Promise<Session> {
    let opened: Opened | undefined;
    const { writer } = await SessionWriter.open(path, {
      load: async (file) => {
        opened = await openForResume(file);
        return opened.loaded;
      },
    });
    const session = new Session(writer, opened!, options);
    for (const message of openCallsAtLeaf(opened!.path)) {
      session.append({ type: "message", message });
    }
    if (session.#indexStale) session.#writeIndex();
    return session;
  }

  get id(): string {
    return this.#writer.header.id;
  }

  get path(): string {
    return this.#writer.path;
  }

  get header(): SessionHeader {
    return this.#writer.header;
  }

  /** The current position: the last entry written, or null in an empty session. */
  get leafId(): string | null {
    return this.#writer.leafId;
  }

  /** Every entry in file order (reading the lines not read yet). */
  get entries(): readonly SessionEntry[] {
    this.#readAll();
    return this.#entries;
  }

  get(id: string): SessionEntry | undefined {
    if (!this.#byId.has(id)) this.#readAll();
    return this.#byId.get(id);
  }

  /**
   * Whether the file holds a `subagent` entry, on any branch. Read from what is in memory; the
   * lines a resume left unread are read only when no compaction read says they hold none (a
   * file written before compactions said so).
   */
  hasSubagentEntries(): boolean {
    if (this.#subagents || this.#complete || this.#unreadSubagents === false) {
      return this.#subagents;
    }
    this.#readAll();
    return this.#subagents;
  }

  /**
   * Writes `entry` under the leaf, at once and whole. A compaction is given the checkpoint of
   * the state it follows, and whether a subagent entry came before it, so a later resume can
   * start reading at it.
   */
  append(given: NewEntry): SessionEntry {
    const entry = this.#mask?.(given) ?? given;
    const written = this.#remember(
      entry.type === "compaction" ? this.#appendCompaction(entry) : this.#writer.append(entry),
    );
    this.#replayer.apply(written);
    if (written.type === "compaction") {
      this.#wantsIndex = true;
      this.#writeIndex();
    }
    return written;
  }

  /**
   * Writes `entry` with its checkpoint; without the plan's records when they would make the line
   * longer than a reader takes (`EntryTooLongError`: each step's answer may be megabytes), so
   * the plan is read from the lines before, as for a compaction an older tern wrote.
   */
  #appendCompaction(entry: NewEntry & { type: "compaction" }): SessionEntry {
    const checkpoint = entry.checkpoint ?? this.#replayer.checkpoint();
    const full = {
      ...entry,
      checkpoint,
      subagentsBefore: entry.subagentsBefore ?? this.hasSubagentEntries(),
    };
    try {
      return this.#writer.append(full);
    } catch (error) {
      if (!(error instanceof EntryTooLongError) || checkpoint.plan === undefined) throw error;
      const { plan: _plan, ...withoutPlan } = checkpoint;
      return this.#writer.append({ ...full, checkpoint: withoutPlan });
    }
  }

  /**
   * Passes every entry appended from now on through `mask` before it is written or replayed
   * (the conversation masks the keys it knows of, whoever appends: a turn, a plan, a subagent's
   * records, a compaction); undefined stops it.
   */
  maskEntries(mask: ((entry: NewEntry) => NewEntry) | undefined): void {
    this.#mask = mask;
  }

  /** Writes a copied entry as it is (fork): same id and parent, unknown types included. */
  appendCopy(raw: Record<string, unknown>): void {
    const leafId = this.leafId;
    this.#writer.appendRaw(raw);
    const { id, parentId, timestamp } = raw as Pick<SessionEntry, "id" | "parentId" | "timestamp">;
    const entry = this.#remember(
      KNOWN_ENTRY_TYPES.has(String(raw.type))
        ? raw as unknown as SessionEntry
        : { type: "unknown", id, parentId, timestamp, raw },
    );
    if (entry.parentId === leafId) this.#replayer.apply(entry);
    else this.#replay(this.entriesTo());
  }

  /**
   * Moves the leaf to `entryId` (null: before the first entry) by appending a branch entry
   * under it; `summary` records what was left on the old branch.
   * @throws {UnknownEntryError} when there is no such entry.
   */
  branchFrom(entryId: string | null, summary?: string): BranchEntry {
    if (entryId !== null && this.get(entryId) === undefined) {
      throw new UnknownEntryError(this.id, entryId);
    }
    const entry: NewEntry = { type: "branch", fromId: this.leafId };
    if (summary) entry.summary = summary;
    const branch = this.#remember(this.#writer.append(entry, { parentId: entryId }));
    this.#replay(this.entriesTo());
    return branch as BranchEntry;
  }

  /** The entries from the root to `id` (default: the leaf), reading older lines if need be. */
  entriesTo(id: string | null = this.leafId): SessionEntry[] {
    if (id !== null && !this.#byId.has(id)) this.#readAll();
    const path = pathTo(this.#byId, id);
    const first = path[0];
    if (this.#complete || !first || first.parentId === null || this.#byId.has(first.parentId)) {
      return path;
    }
    this.#readAll();
    return pathTo(this.#byId, id);
  }

  /**
   * The latest entry on the path to the leaf that passes `test`, walking back from the leaf:
   * older lines are read only when the walk reaches them (a resume left them unread).
   */
  findOnPath(test: (entry: SessionEntry) => boolean): SessionEntry | undefined {
    const get = (id: string) => {
      if (!this.#byId.has(id)) this.#readAll();
      return this.#byId.get(id);
    };
    for (const entry of ancestors(get, this.leafId)) if (test(entry)) return entry;
    return undefined;
  }

  /** The replayed state at the leaf (kept as entries are appended, not replayed again). */
  state(): ReplayState {
    return this.#replayer.state();
  }

  /** Gives a draft its session file name, so it is listed and found (`SessionWriter.publish`). */
  publish(): void {
    this.#writer.publish();
  }

  /** Releases the lock. Idempotent. */
  close(): void {
    if (this.#closed) return;
    if (this.#indexStale) this.#writeIndex();
    this.#closed = true;
    this.#writer.close();
  }

  /**
   * Closes the session and, when this process made it and it has no entry at all (a run that
   * failed before its first message), removes the file so no empty session is left behind. A
   * session opened from a file is never removed: lines it could not read (a write a kill cut
   * off, entries of a newer tern) are still there for a person. Idempotent.
   */
  closeOrDiscard(): void {
    this.close();
    if (!this.#made || this.#entries.length > 0) return;
    try {
      Deno.removeSync(this.path);
    } catch {
      // Already gone, or not ours to remove: an empty session is harmless.
      return;
    }
    // A start that wrote nothing leaves no folder it made (the sessions folder of a new home).
    removeEmptyFolders(this.#writer.madeFolders);
  }

  #remember(entry: SessionEntry): SessionEntry {
    if (entry.type === "subagent") this.#subagents = true;
    this.#entries.push(entry);
    this.#byId.set(entry.id, entry);
    this.#indexStale = true;
    return entry;
  }

  #replay(path: readonly SessionEntry[]): void {
    this.#replayer = new Replayer();
    for (const entry of path) this.#replayer.apply(entry);
    this.#onReplay?.(path.length);
  }

  /** Reads the lines before those read at opening. */
  #readAll(): void {
    if (this.#complete) return;
    const before = loadSessionSync(this.path, { end: this.#start });
    this.#entries = [...before.entries, ...this.#entries];
    // A line read now may name a parent on a line read at opening: no link, as a whole read has
    // it. The warning was the opening's to give; the file is the same.
    rootLaterParents(this.#entries, new LineWarnings(this.path), () => "");
    if (before.entries.some((entry) => entry.type === "subagent")) this.#subagents = true;
    this.#byId.clear();
    for (const entry of this.#entries) this.#byId.set(entry.id, entry);
    this.#complete = true;
    this.#unread.read = this.#byId;
  }

  /** Records the ids of every entry written so far next to the file (`id_index.ts`). */
  #writeIndex(): void {
    if (this.#closed || !this.#wantsIndex) return;
    let size: number;
    try {
      size = Deno.statSync(this.path).size;
    } catch {
      return;
    }
    const ids = new Set(this.#complete ? [] : this.#unread.index?.ids());
    for (const entry of this.#entries) ids.add(entry.id);
    writeIdIndex(this.path, { sessionId: this.id, size, ids });
    this.#indexStale = false;
  }
}
