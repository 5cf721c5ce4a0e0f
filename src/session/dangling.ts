/**
 * Tool calls without results. A tern killed while a tool ran (SIGKILL, power loss) leaves an
 * assistant message whose calls have no tool message after them; every model API rejects such
 * a conversation. Replay closes each such call with an "interrupted" observation, and a session
 * opened to be continued records those observations, so what is sent is always well formed.
 */
import type { Message, ToolCall, ToolMessage } from "../core/messages.ts";
import { observationText } from "../core/observation.ts";
import type { ContextItem } from "../context/compaction_types.ts";
import type { SessionEntry } from "./types.ts";

/** What the model is told about a call tern never finished. */
export const INTERRUPTED_MESSAGE = "interrupted: tern stopped before this call finished";

/** The observation that closes `call`, which never got its result. */
export function interruptedResult(call: ToolCall): ToolMessage {
  return {
    role: "tool",
    toolCallId: call.id,
    name: call.name,
    content: observationText({ status: "ERROR", code: "CANCELLED", message: INTERRUPTED_MESSAGE }),
  };
}

/**
 * The conversation made well formed: after each assistant message with tool calls comes exactly
 * one tool message per call, in the calls' order; a call without one gets `interruptedResult()`
 * (tied to the assistant's entry id). Tool messages that answer no open call (duplicates, or
 * results of calls a compaction summarised away) are left out. Returns `items` itself when it
 * is already well formed.
 */
export function closeDanglingCalls(items: ContextItem[]): ContextItem[] {
  if (isWellFormed(items.map((item) => item.message))) return items;
  const out: ContextItem[] = [];
  let open: { id: string; calls: ToolCall[]; results: Map<string, ContextItem> } | undefined;
  const closeOpen = () => {
    if (open === undefined) return;
    for (const call of open.calls) {
      out.push(open.results.get(call.id) ?? { id: open.id, message: interruptedResult(call) });
    }
    open = undefined;
  };
  for (const item of items) {
    const message = item.message;
    if (message.role === "tool") {
      const answers = open?.calls.some((call) => call.id === message.toolCallId) &&
        !open.results.has(message.toolCallId);
      if (answers) open!.results.set(message.toolCallId, item);
      continue;
    }
    closeOpen();
    out.push(item);
    const calls = message.role === "assistant" ? message.toolCalls ?? [] : [];
    if (calls.length > 0) open = { id: item.id, calls, results: new Map() };
  }
  closeOpen();
  return out;
}

/** True when every tool call is answered by exactly one tool message, in order. */
export function isWellFormed(messages: readonly Message[]): boolean {
  let expected: ToolCall[] = [];
  for (const message of messages) {
    if (message.role === "tool") {
      if (expected[0]?.id !== message.toolCallId) return false;
      expected = expected.slice(1);
      continue;
    }
    if (expected.length > 0) return false;
    expected = message.role === "assistant" ? [...message.toolCalls ?? []] : [];
  }
  return expected.length === 0;
}

/**
 * The observations that close the calls left open at the end of `path` (root → leaf): those of
 * the last assistant message when only its tool results, or entries that are not messages,
 * follow it. Empty when nothing is open.
 */
export function openCallsAtLeaf(path: readonly SessionEntry[]): ToolMessage[] {
  const answered = new Set<string>();
  for (let i = path.length - 1; i >= 0; i--) {
    const entry = path[i];
    // What replay puts between the call and the leaf: results appended there would not follow
    // the call, and replay closes it in place instead.
    if (entry.type === "compaction" || (entry.type === "branch" && entry.summary)) return [];
    if (entry.type !== "message") continue;
    const message = entry.message;
    if (message.role === "tool") {
      answered.add(message.toolCallId);
      continue;
    }
    if (message.role !== "assistant") return [];
    return (message.toolCalls ?? [])
      .filter((call) => !answered.has(call.id))
      .map(interruptedResult);
  }
  return [];
}
