/**
 * An open session: the writer (which holds the file's lock), every entry by id, and the leaf.
 * Appends go under the leaf; `branchFrom` moves the leaf by appending a `branch` entry under an
 * older entry, so old lines are never touched. `state()` replays the path to the leaf.
 */
import { UnknownEntryError } from "./errors.ts";
import { openCallsAtLeaf } from "./dangling.ts";
import { replay, type ReplayState } from "./replay.ts";
import { SessionWriter } from "./store.ts";
import {
  type BranchEntry,
  KNOWN_ENTRY_TYPES,
  type NewEntry,
  type SessionEntry,
  type SessionHeader,
} from "./types.ts";

export class Session {
  readonly #writer: SessionWriter;
  readonly #entries: SessionEntry[];
  readonly #byId = new Map<string, SessionEntry>();
  /** Problems found while loading (torn lines, unknown versions), for the person to see. */
  readonly warnings: readonly string[];

  private constructor(writer: SessionWriter, entries: SessionEntry[], warnings: string[]) {
    this.#writer = writer;
    this.#entries = entries;
    for (const entry of entries) this.#byId.set(entry.id, entry);
    this.warnings = warnings;
  }

  /** Starts a new session file for `cwd` under `ternHome`. */
  static create(ternHome: string, options: {
    cwd: string;
    ternVersion: string;
    parent?: SessionHeader["parent"];
  }): Session {
    return new Session(SessionWriter.create(ternHome, options), [], []);
  }

  /**
   * Opens an existing session for appending (to continue it). Tool calls left without results
   * at the leaf (tern was killed while they ran) are closed first: an "interrupted" tool message
   * is appended for each. @throws {SessionBusyError} when another process holds it, a
   * TernError when the file is not a session.
   */
  static async open(path: string): Promise<Session> {
    const { writer, loaded } = await SessionWriter.open(path);
    const session = new Session(writer, [...loaded.entries], [...loaded.warnings]);
    for (const message of openCallsAtLeaf(session.entriesTo())) {
      session.append({ type: "message", message });
    }
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

  /** Every entry in file order. */
  get entries(): readonly SessionEntry[] {
    return this.#entries;
  }

  get(id: string): SessionEntry | undefined {
    return this.#byId.get(id);
  }

  /** Writes `entry` under the leaf, at once and whole. */
  append(entry: NewEntry): SessionEntry {
    return this.#remember(this.#writer.append(entry));
  }

  /** Writes a copied entry as it is (fork): same id and parent, unknown types included. */
  appendCopy(raw: Record<string, unknown>): void {
    this.#writer.appendRaw(raw);
    const { id, parentId, timestamp } = raw as Pick<SessionEntry, "id" | "parentId" | "timestamp">;
    this.#remember(
      KNOWN_ENTRY_TYPES.has(String(raw.type))
        ? raw as unknown as SessionEntry
        : { type: "unknown", id, parentId, timestamp, raw },
    );
  }

  /**
   * Moves the leaf to `entryId` (null: before the first entry) by appending a branch entry
   * under it; `summary` records what was left on the old branch.
   * @throws {UnknownEntryError} when there is no such entry.
   */
  branchFrom(entryId: string | null, summary?: string): BranchEntry {
    if (entryId !== null && !this.#byId.has(entryId)) {
      throw new UnknownEntryError(this.id, entryId);
    }
    const entry: NewEntry = { type: "branch", fromId: this.leafId };
    if (summary) entry.summary = summary;
    return this.#remember(this.#writer.append(entry, { parentId: entryId })) as BranchEntry;
  }

  /** The entries from the root to `id` (default: the leaf). */
  entriesTo(id: string | null = this.leafId): SessionEntry[] {
    return pathTo(this.#byId, id);
  }

  /** The replayed state at the leaf. */
  state(): ReplayState {
    return replay(this.entriesTo());
  }

  /** Releases the lock. Idempotent. */
  close(): void {
    this.#writer.close();
  }

  /**
   * Closes the session and, when it has no entry at all (a run that failed before its first
   * message), removes the file so no empty session is left behind. Idempotent.
   */
  closeOrDiscard(): void {
    this.close();
    if (this.#entries.length > 0) return;
    try {
      Deno.removeSync(this.path);
    } catch {
      // Already gone, or not ours to remove: an empty session is harmless.
    }
  }

  #remember(entry: SessionEntry): SessionEntry {
    this.#entries.push(entry);
    this.#byId.set(entry.id, entry);
    return entry;
  }
}

/** Root → `id` through `parentId` links; stops at a missing parent or a repeated id. */
function pathTo(
  byId: ReadonlyMap<string, SessionEntry>,
  id: string | null,
): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let current = id === null ? undefined : byId.get(id);
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    path.push(current);
    current = current.parentId === null ? undefined : byId.get(current.parentId);
  }
  return path.reverse();
}
