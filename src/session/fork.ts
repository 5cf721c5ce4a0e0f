/**
 * Fork: a new session file holding a copy of one path (root → an entry) of another session,
 * with the same entry ids (an imported file's entries get new ones), and a header that records
 * where it came from. The source is only read: forking works even while another process holds
 * the source session.
 *
 * Only tern's own session files (`isOwnSessionFile`) are copied whole. Any other file (one a
 * repository ships, one saved elsewhere) is input tern did not write: forking imports its
 * conversation alone, into the current workspace, and never what a session restores as
 * settings or grants.
 */
import { SessionFileError, UnknownEntryError } from "./errors.ts";
import { loadSession } from "./load.ts";
import { isOwnSessionFile } from "./paths.ts";
import { Replayer } from "./replay.ts";
import { Session } from "./session.ts";
import { SessionTree } from "./tree.ts";
import { type SessionEntry, summarisedCount } from "./types.ts";
import { uniqueHexId } from "../core/ids.ts";
import type { ImagePart, Message } from "../core/messages.ts";

/**
 * Copies the path to `entryId` (default: the source's leaf) of the session at `sourcePath`
 * into a new session, open for appending. A session of tern's own (under `ternHome`) is copied
 * whole into its own workspace's folder. Any other file is imported (see
 * {@linkcode importedEntries}) into `workspace`'s folder: its header's `cwd` is only what the
 * file says.
 * @throws {UnknownEntryError} for an unknown entry, a SessionFileError when the file is not
 * tern's own and no `workspace` is given.
 */
export async function forkSession(ternHome: string, sourcePath: string, options: {
  entryId?: string;
  ternVersion: string;
  /** The current workspace (absolute real path): where a file not of tern's own is imported. */
  workspace?: string;
}): Promise<Session> {
  const source = await loadSession(sourcePath);
  const tree = new SessionTree(source.entries);
  const leafId = options.entryId ?? tree.leafId;
  if (leafId !== null && tree.get(leafId) === undefined) {
    throw new UnknownEntryError(source.header.id, leafId);
  }
  const own = isOwnSessionFile(ternHome, sourcePath);
  if (!own && options.workspace === undefined) {
    throw new SessionFileError(
      `Cannot fork "${sourcePath}": it is not one of tern's sessions under TERN_HOME; import ` +
        "it with `tern sessions fork <file>` in the workspace it is for",
      sourcePath,
    );
  }
  const path = tree.path(leafId);
  // A draft until every entry is in: a fork cut off (Ctrl-C, a kill, a full disk) is never
  // the newest session, which `tern run -c` would continue without the history it lacks.
  const fork = Session.create(ternHome, {
    draft: true,
    cwd: own ? source.header.cwd : options.workspace!,
    ternVersion: options.ternVersion,
    parent: { id: source.header.id, path: sourcePath, leafId },
    // The history goes on with the server it went to (see SessionHeader.serverChosenBy); a file
    // not of tern's own says nothing trustworthy about it.
    ...(own && source.header.serverChosenBy !== undefined
      ? { serverChosenBy: source.header.serverChosenBy }
      : {}),
  });
  try {
    for (const entry of own ? path.map(rawEntry) : importedEntries(path)) fork.appendCopy(entry);
    fork.publish();
  } catch (error) {
    fork.close();
    try {
      Deno.removeSync(fork.path);
    } catch {
      // Gone already; a draft is never listed either way.
    }
    throw error;
  }
  return fork;
}

/** The line an entry was read from: unknown entries keep every field they came with. */
function rawEntry(entry: SessionEntry): Record<string, unknown> {
  return entry.type === "unknown" ? entry.raw : { ...entry };
}

/**
 * What a fork of a file tern did not write keeps of the path `path`: the conversation alone (the
 * person's, the model's and the tools' messages, compaction summaries, branch notes, labels), each
 * entry rebuilt from its known fields and linked to the one kept before it. Each message keeps
 * only what the transcript shows and images (`conversationMessage`: no reasoning, no opaque
 * provider fields). Everything a session restores beyond the conversation is left out: the model,
 * thinking level, review mode and profile (`applySessionSettings`), permission entries (approvals
 * and grants "for this session", which the gate restores), a compaction's checkpoint (which
 * restores all of those: it is computed again from what is kept), pinned instructions (they join
 * the system prompt), system messages, plans (a plan continues where it stopped), subagent runs
 * (they name child sessions to read), consolidation records, usage and cost figures, and entries
 * of types this tern does not know (a newer tern may give them meaning).
 *
 * Every entry gets a new id, 8 hex characters as tern makes them, and every id an entry names
 * (`parentId`, a compaction's `firstKeptId`, a branch's `fromId`, a label's `targetId`) is the
 * new id of the entry it named: the file's own ids (any string, a line break included) never
 * reach tern's session. A name of an entry that was not kept becomes null (a compaction then
 * keeps nothing before it, as replay read it before, and a branch comes "from the start"), and a
 * label on such an entry is left out.
 */
export function importedEntries(path: readonly SessionEntry[]): Record<string, unknown>[] {
  const kept: Record<string, unknown>[] = [];
  const replayer = new Replayer();
  const newIds = new Map<string, string>();
  const taken = new Set<string>();
  const renamed = (id: string | null): string | null => id === null ? null : newIds.get(id) ?? null;
  let parentId: string | null = null;
  for (const entry of path) {
    const fields = conversationFields(entry, renamed);
    if (fields === undefined) continue;
    const id = uniqueHexId(taken);
    taken.add(id);
    const copy: Record<string, unknown> = {
      type: entry.type,
      id,
      parentId,
      timestamp: entry.timestamp,
      ...fields,
    };
    if (entry.type === "compaction") copy.checkpoint = replayer.checkpoint();
    replayer.apply(copy as unknown as SessionEntry);
    kept.push(copy);
    newIds.set(entry.id, id);
    parentId = id;
  }
  return kept;
}

/**
 * The fields of a conversation entry besides type, id, parent and time, the ids it names passed
 * through `renamed`; undefined for other entries, and for a label whose entry was not kept.
 */
function conversationFields(
  entry: SessionEntry,
  renamed: (id: string | null) => string | null,
): Record<string, unknown> | undefined {
  switch (entry.type) {
    case "message": {
      const message = conversationMessage(entry.message);
      return message === undefined ? undefined : { message };
    }
    case "compaction":
      return {
        summary: entry.summary,
        firstKeptId: renamed(entry.firstKeptId),
        tokensBefore: entry.tokensBefore,
        tokensAfter: entry.tokensAfter,
        summarisedCount: summarisedCount(entry),
        ...(entry.fallback === undefined ? {} : { fallback: entry.fallback }),
        ...(entry.focus === undefined ? {} : { focus: entry.focus }),
      };
    case "branch":
      return {
        fromId: renamed(entry.fromId),
        ...(entry.summary ? { summary: entry.summary } : {}),
      };
    case "label": {
      const targetId = renamed(entry.targetId);
      return targetId === null ? undefined : { targetId, label: entry.label };
    }
    default:
      return undefined;
  }
}

/**
 * What an imported message keeps: its role, text, tool calls (id, name, arguments), a tool
 * result's call id and name, and images; undefined for a system message. Nothing the person
 * never reads in the transcript yet the provider gets: reasoning (`thinking`, whose text goes
 * back to a Chat Completions server as `reasoning_content`, so a shipped file could hide orders
 * to the model there, and whose signatures and encrypted items were made for another account)
 * and a call's `extraContent`, sent back as it is.
 */
function conversationMessage(message: Message): Message | undefined {
  switch (message.role) {
    case "system":
      return undefined;
    case "user":
      return withImages({ role: "user", content: message.content }, message.images);
    case "assistant": {
      const calls = message.toolCalls?.map(({ id, name, arguments: args }) => ({
        id,
        name,
        arguments: args,
      }));
      return {
        role: "assistant",
        content: message.content,
        ...(calls ? { toolCalls: calls } : {}),
      };
    }
    case "tool": {
      const { toolCallId, name, content } = message;
      return withImages({ role: "tool", toolCallId, name, content }, message.images);
    }
  }
}

function withImages<T extends Message>(message: T, images: ImagePart[] | undefined): T {
  return images === undefined ? message : { ...message, images };
}
