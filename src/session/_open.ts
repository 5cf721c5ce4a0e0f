/**
 * Opening a session to continue it: read from its end (`tail.ts`) when the id index covers the
 * lines that leaves unread, and whole otherwise.
 */
import { type IdIndex, readIdIndex } from "./id_index.ts";
import { type LoadedSession, loadSession } from "./load.ts";
import { loadTail } from "./tail.ts";
import { ancestors } from "./tree.ts";
import type { SessionEntry } from "./types.ts";

/** A session file as `Session.open` read it: maybe only from its end (`tail.ts`). */
export interface Opened {
  loaded: LoadedSession;
  /** Where the lines read start (after the header when the whole file was read). */
  start: number;
  /** The path to the leaf from where replay must start. */
  path: SessionEntry[];
  /** Every entry was read. */
  complete: boolean;
  /** The ids of the entries not read. */
  unread: UnreadIds;
  /** The id index on disk covers the file as it was read. */
  indexed: boolean;
}

/**
 * Reads the session at `path` from its end (`loadTail`) when the id index covers the lines that
 * leaves unread, and whole otherwise: also when an id read is repeated among the lines read, or
 * a line past what the index covers has an id it lists (a line appended since with an earlier
 * line's id), so that `loadSession` refuses the file as it refuses it to every reader.
 * @throws {SessionFileError} what `loadSession` throws.
 */
export async function openForResume(path: string): Promise<Opened> {
  const tail = loadTail(path);
  const whole = tail.start === tail.headerEnd;
  const index = whole ? undefined : readIdIndex(path, tail.header.id);
  const covered = index !== undefined && index.size >= tail.start &&
    index.size <= Deno.lstatSync(path).size;
  const repeats = tail.repeatsAnId ||
    (covered &&
      tail.entries.some((entry, i) => tail.entryStarts[i] >= index.size && index.has(entry.id)));
  if (!repeats && (whole || covered)) {
    const unread = new UnreadIds(index);
    return {
      loaded: { ...tail, otherIds: unread },
      start: tail.start,
      path: tail.path,
      complete: whole,
      indexed: !whole,
      unread,
    };
  }
  const loaded = await loadSession(path);
  const byId = new Map<string, SessionEntry>();
  for (const entry of loaded.entries) byId.set(entry.id, entry);
  return {
    loaded,
    start: tail.headerEnd,
    path: pathTo(byId, loaded.entries.at(-1)?.id ?? null),
    complete: true,
    indexed: false,
    unread: new UnreadIds(),
  };
}

/** The ids of a session's unread lines: the id index's until they are read, then theirs. */
export class UnreadIds {
  readonly index: IdIndex | undefined;
  /** Every entry by id, once all lines were read. */
  read: ReadonlyMap<string, unknown> | undefined;

  constructor(index?: IdIndex) {
    this.index = index;
  }

  has(id: string): boolean {
    return this.read ? this.read.has(id) : this.index?.has(id) ?? false;
  }
}

/** Root → `id` through `parentId` links; stops at a missing parent or a repeated id. */
export function pathTo(
  byId: ReadonlyMap<string, SessionEntry>,
  id: string | null,
): SessionEntry[] {
  return [...ancestors((at) => byId.get(at), id)].reverse();
}
