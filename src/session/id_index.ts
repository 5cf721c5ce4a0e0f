/**
 * The id index: a file next to a session (`<session>.jsonl.ids`) listing the ids of its entries
 * in the first `size` bytes. A session resumed from its end (`tail.ts`) does not read the lines
 * before its last compaction, yet every id it gives a new entry must differ from theirs: this
 * list is all it takes from those lines.
 *
 * The session file stays the only source of truth: the index is never used to find, replay or
 * trust an entry. One that is missing, unreadable, of another session, or that does not reach
 * where reading from the end stopped, is ignored (the session is then read whole and the index
 * written anew). A wrong list can at worst make a new id collide by chance, as likely as without
 * any list.
 */

/** Bumped when the index's shape changes; an index of another version is ignored. */
const INDEX_VERSION = 1;

/** The largest index read: 9 bytes an id, so about 7 million entries. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/** An id index as read. */
export interface IdIndex {
  /** The bytes of the session file the list covers (whole lines from the start). */
  size: number;
  /** Whether the list holds `id`. */
  has(id: string): boolean;
  /** The list. */
  ids(): string[];
}

/** Where the index of the session file `sessionPath` lives. */
export function idIndexPath(sessionPath: string): string {
  return `${sessionPath}.ids`;
}

/**
 * The index of `sessionPath` when it belongs to session `sessionId` and is well formed;
 * undefined otherwise (also when it is not a plain file). The list is not parsed: a look-up searches its text, as only the few
 * ids a run makes are looked up. Never throws.
 */
export function readIdIndex(sessionPath: string, sessionId: string): IdIndex | undefined {
  const path = idIndexPath(sessionPath);
  let text: string;
  let head: unknown;
  try {
    // Only a plain file of sane size: a link, a FIFO or a device put there must not make the
    // read hang or fill memory.
    const info = Deno.lstatSync(path);
    if (!info.isFile || info.size > MAX_INDEX_BYTES) return undefined;
    text = Deno.readTextFileSync(path);
    head = JSON.parse(text.slice(0, text.indexOf("\n")));
  } catch {
    return undefined;
  }
  if (typeof head !== "object" || head === null) return undefined;
  const { version, session, size } = head as Record<string, unknown>;
  if (version !== INDEX_VERSION || session !== sessionId) return undefined;
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) return undefined;
  const list = text.slice(text.indexOf("\n"));
  return {
    size,
    has: (id) => !id.includes("\n") && list.includes(`\n${id}\n`),
    ids: () => list.split("\n").filter((id) => id !== ""),
  };
}

/**
 * Writes the index of `sessionPath` (session `sessionId`): `ids` are those of every entry in
 * its first `size` bytes. The first line is JSON (version, session, size), then one id a line.
 * Written to a temporary file and renamed over, so a reader sees the old index or the new one.
 * The caller holds the session's lock, so the temporary's one name is never another live
 * writer's: one a kill left is removed here, not left to pile up. Never throws: without an
 * index the next resume reads the session whole.
 */
export function writeIdIndex(
  sessionPath: string,
  options: { sessionId: string; size: number; ids: Iterable<string> },
): void {
  const path = idIndexPath(sessionPath);
  const temporary = `${path}.tmp`;
  const head = JSON.stringify({
    version: INDEX_VERSION,
    session: options.sessionId,
    size: options.size,
  });
  const ids = [...options.ids].filter((id) => !id.includes("\n"));
  const text = `${head}\n${ids.join("\n")}\n`;
  try {
    // Unlinked, never written through: a link put there must not redirect the write.
    removeLeftover(temporary);
    Deno.writeTextFileSync(temporary, text, { mode: 0o600, createNew: true });
    Deno.renameSync(temporary, path);
  } catch {
    try {
      Deno.removeSync(temporary);
    } catch {
      // Never written.
    }
  }
}

/** Removes what a killed writer left at `path`; nothing there is fine. */
function removeLeftover(path: string): void {
  try {
    Deno.removeSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}
