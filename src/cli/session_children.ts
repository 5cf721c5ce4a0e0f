/** `tern sessions tree`'s part for subagents: the child sessions under their parent, nested. */
import { loadSession } from "../session/load.ts";
import { listSessionFiles, type UnreadableSession } from "../session/paths.ts";
import type { SessionEntry } from "../session/types.ts";
import { visibleText } from "../core/terminal_text.ts";
import { recorded } from "./session_text.ts";

/** One child session in the listing: `reason` when its header cannot be read. */
interface Child {
  id: string;
  path: string;
  entries?: number;
  reason?: string;
}

/**
 * Lines naming every subagent session spawned from `sessionId` (and theirs, indented under
 * them): task, agent, run, status; empty when there are none. Reads the headers of the
 * sessions under `ternHome` once. Headers are files anyone may have edited: each file is shown
 * once and each id's children once, so a session naming itself (or a descendant) as its parent,
 * or two files of one id, end the listing instead of looping. A child whose file cannot be
 * loaded gets a line `unreadable: <reason>` under its row, and the listing goes on; a child
 * whose header cannot be read (torn, garbage) cannot say whose it is, so it is listed under the
 * session whose spawn record names its id, marked `header unreadable` with why and its file.
 * Each row is made visible (`visibleText`).
 */
export async function childSessionLines(
  ternHome: string,
  sessionId: string,
  entries: readonly SessionEntry[],
): Promise<string[]> {
  const { sessions, unreadable } = await listSessionFiles(ternHome);
  const byParent = new Map<string, Child[]>();
  for (const info of sessions) {
    if (info.subagentOf === undefined) continue;
    const child = { id: info.id, path: info.path, entries: info.entries };
    byParent.set(info.subagentOf, [...byParent.get(info.subagentOf) ?? [], child]);
  }
  const listed = new Set(sessions.map((info) => info.id));
  const unreadableById = new Map<string, UnreadableSession[]>();
  for (const file of unreadable) {
    if (listed.has(file.id)) continue;
    unreadableById.set(file.id, [...unreadableById.get(file.id) ?? [], file]);
  }
  // The children of `id`: those whose header names it, then the unreadable files its spawn
  // records name.
  const childrenOf = (id: string, records: readonly Record[]): Child[] => {
    const children = [...byParent.get(id) ?? []];
    for (const record of records) {
      if (record.kind !== "spawn" || typeof record.childSessionId !== "string") continue;
      for (const file of unreadableById.get(record.childSessionId) ?? []) {
        children.push({ id: file.id, path: file.path, reason: file.reason });
      }
    }
    return children;
  };
  const top = childrenOf(sessionId, subagentRecords(entries));
  if (top.length === 0) return [];
  const lines = ["subagents:"];
  const shown = new Set<string>();
  const expanded = new Set([sessionId]);
  // Depth-first with an explicit stack, each child with its parent's records.
  const stack = top.toReversed().map((info) => ({
    info,
    depth: 1,
    records: subagentRecords(entries),
  }));
  while (stack.length > 0) {
    const { info, depth, records } = stack.pop()!;
    if (shown.has(info.path)) continue;
    shown.add(info.path);
    const spawn = records.find((r) => r.kind === "spawn" && r.childSessionId === info.id);
    const done = records.find((r) => r.kind === "completion" && r.childSessionId === info.id);
    // A record's fields may hold any JSON (a file from elsewhere): shown as what they are.
    const what = spawn
      ? `${recorded(spawn.taskName)} (${recorded(spawn.agentId)}, ${recorded(spawn.runId)})`
      : "(no spawn record)";
    const status = done?.status === undefined ? "running or lost" : recorded(done.status);
    const size = info.reason === undefined
      ? `${info.entries} entries`
      : `header unreadable: ${info.reason}`;
    // Headers and records name tasks and agents from a file anyone may have edited: the row
    // stays one row, every character of it visible.
    const row = `${info.id}  ${what}  ${status}  ${size}`;
    lines.push(`${"  ".repeat(depth)}${visibleText(row)}`);
    if (expanded.has(info.id)) continue;
    // Its records are read only when they may name a child: one listed under it, or a file
    // whose header cannot say whose it is.
    if (!byParent.has(info.id) && (unreadableById.size === 0 || info.reason !== undefined)) {
      continue;
    }
    expanded.add(info.id);
    let own: Record[] = [];
    if (info.reason === undefined) {
      try {
        own = subagentRecords((await loadSession(info.path)).entries);
      } catch (error) {
        // One damaged child (a repeated id, a line that is not JSON) is shown as such; its own
        // children, whose headers name it, are still listed, without records to describe them.
        const reason = error instanceof Error ? error.message : String(error);
        lines.push(`${"  ".repeat(depth + 1)}unreadable: ${visibleText(reason)}`);
      }
    }
    for (const child of childrenOf(info.id, own).toReversed()) {
      stack.push({ info: child, depth: depth + 1, records: own });
    }
  }
  return lines;
}

/** A subagent record as a file holds it: any field may be of any JSON type. */
type Record = {
  kind?: unknown;
  childSessionId?: unknown;
  taskName?: unknown;
  agentId?: unknown;
  runId?: unknown;
  status?: unknown;
};

function subagentRecords(entries: readonly SessionEntry[]): Record[] {
  return entries.filter((entry) => entry.type === "subagent").map((entry) =>
    (entry as { data: Record }).data ?? {}
  );
}
