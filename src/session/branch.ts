/**
 * Moving the leaf: continuing from an older entry appends a `branch` entry under it. What was
 * left on the old branch (its requests, the files it changed, its last answer) is recorded in
 * the entry as a short summary, written without a model call, so replay can tell the model.
 */
import type { Message } from "../core/messages.ts";
import { BUILTIN_MANIFEST } from "../tools/mod.ts";
import type { Session } from "./session.ts";
import type { BranchEntry, SessionEntry } from "./types.ts";

/** Longest branch summary, in characters. */
const MAX_SUMMARY_CHARS = 2_000;

/**
 * Moves the session's leaf to `entryId` (a branch entry records the move and, when messages
 * were left behind, their summary). @throws {UnknownEntryError} for an unknown entry.
 */
export function moveLeaf(session: Session, entryId: string | null): BranchEntry {
  const kept = new Set(session.entriesTo(entryId).map((entry) => entry.id));
  const left = session.entriesTo().filter((entry) => !kept.has(entry.id));
  return session.branchFrom(entryId, branchSummary(left));
}

/** A short account of the messages in `entries`; undefined when there are none. */
export function branchSummary(entries: readonly SessionEntry[]): string | undefined {
  const messages = entries.flatMap((entry) => entry.type === "message" ? [entry.message] : []);
  if (messages.length === 0) return undefined;
  const requests = messages.flatMap((m) => m.role === "user" ? [oneLine(m.content, 200)] : []);
  const changed = new Set<string>();
  let calls = 0;
  let answer = "";
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    if (message.content.trim() !== "") answer = message.content;
    for (const call of message.toolCalls ?? []) {
      calls++;
      const path = changedPath(call.name, call.arguments);
      if (path) changed.add(path);
    }
  }
  const lines = [
    ...requests.map((request) => `- Request: ${request}`),
    `- Tool calls: ${calls}`,
    ...(changed.size > 0 ? [`- Files written or edited: ${[...changed].join(", ")}`] : []),
    ...(answer ? [`- Last answer: ${oneLine(answer, 500)}`] : []),
  ];
  const text = lines.join("\n");
  return text.length <= MAX_SUMMARY_CHARS ? text : `${text.slice(0, MAX_SUMMARY_CHARS - 1)}…`;
}

/** Built-in file tools that change files: the worker runs them and they are not read-only. */
const FILE_WRITERS: ReadonlySet<string> = new Set(
  BUILTIN_MANIFEST.filter((entry) => !entry.readOnly && entry.runsIn === "worker")
    .map((entry) => entry.name),
);

/** The `path` a call of a built-in file writer names. */
function changedPath(tool: string, args: string): string | undefined {
  if (!FILE_WRITERS.has(tool)) return undefined;
  try {
    const parsed = JSON.parse(args) as { path?: unknown };
    return typeof parsed.path === "string" ? parsed.path : undefined;
  } catch {
    return undefined;
  }
}

function oneLine(text: Message["content"], max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
