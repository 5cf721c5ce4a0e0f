/**
 * Fork: a new session file holding a copy of one path (root → an entry) of another session,
 * with the same entry ids, and a header that records where it came from. The source is only
 * read: forking works even while another process holds the source session.
 */
import { UnknownEntryError } from "./errors.ts";
import { loadSession } from "./load.ts";
import { Session } from "./session.ts";
import { SessionTree } from "./tree.ts";
import type { SessionEntry } from "./types.ts";

/**
 * Copies the path to `entryId` (default: the source's leaf) of the session at `sourcePath`
 * into a new session, open for appending. @throws {UnknownEntryError} for an unknown entry.
 */
export async function forkSession(ternHome: string, sourcePath: string, options: {
  entryId?: string;
  ternVersion: string;
}): Promise<Session> {
  const source = await loadSession(sourcePath);
  const tree = new SessionTree(source.entries);
  const leafId = options.entryId ?? tree.leafId;
  if (leafId !== null && tree.get(leafId) === undefined) {
    throw new UnknownEntryError(source.header.id, leafId);
  }
  const fork = await Session.create(ternHome, {
    cwd: source.header.cwd,
    ternVersion: options.ternVersion,
    parent: { id: source.header.id, path: sourcePath, leafId },
  });
  try {
    for (const entry of tree.path(leafId)) fork.appendCopy(rawEntry(entry));
  } catch (error) {
    fork.close();
    throw error;
  }
  return fork;
}

/** The line an entry was read from: unknown entries keep every field they came with. */
function rawEntry(entry: SessionEntry): Record<string, unknown> {
  return entry.type === "unknown" ? entry.raw : { ...entry };
}
