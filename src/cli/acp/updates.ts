/**
 * tern's agent events and session history as ACP `session/update`s: text and thinking chunks,
 * tool calls with their status, locations and proposed diffs. Pure translation, plus the one
 * read a diff needs.
 */
import type {
  SessionUpdate,
  StopReason,
  ToolCallContent,
  ToolKind,
} from "@agentclientprotocol/sdk";
import { dirname, isAbsolute, resolve, sep } from "../../core/path.ts";
import type { AgentEvent, ExitReason } from "../../core/events.ts";
import type { Message } from "../../core/messages.ts";
import { type Observation, observationText } from "../../core/observation.ts";
import { type DiffReading, proposedChange } from "../interactive/proposed_diff.ts";
import type { ReadRefusal } from "../../config/workspace_file.ts";

/** Longest tool output sent to the editor, in characters; the rest is counted, not sent. */
const OUTPUT_CHARS = 20_000;

/**
 * What a call does, from its arguments' shape (never its name): read-only calls read, a
 * `command` executes, a `path` with new text edits.
 */
export function toolKind(readOnly: boolean, args: unknown): ToolKind {
  if (readOnly) return "read";
  const record = isRecord(args) ? args : {};
  if (typeof record.command === "string") return "execute";
  if (typeof record.path === "string") return "edit";
  return "other";
}

/** The one line an editor shows for a call. */
export function toolTitle(name: string, args: unknown): string {
  const record = isRecord(args) ? args : {};
  for (const key of ["command", "path", "pattern", "query", "url"]) {
    const value = record[key];
    if (typeof value === "string" && value !== "") return `${name}: ${oneLine(value)}`;
  }
  return name;
}

/** The file a call names, absolute, as an ACP location. */
export function toolLocations(args: unknown, workspace: string): Array<{ path: string }> {
  const record = isRecord(args) ? args : {};
  if (typeof record.path !== "string" || record.path === "") return [];
  return [{ path: isAbsolute(record.path) ? record.path : resolve(workspace, record.path) }];
}

/**
 * The change a writing call proposes, as an ACP diff (whole file before and after); for a file
 * the model may not read (`reading.refuse`) or a link out of the workspace, a line saying why
 * there is none.
 */
export async function proposedDiffContent(
  args: unknown,
  workspace: string,
  reading: DiffReading,
): Promise<ToolCallContent[]> {
  const change = proposedChange(args, workspace, reading);
  if (change !== undefined && "withheld" in change) {
    return [{ type: "content", content: { type: "text", text: `No diff: ${change.withheld}` } }];
  }
  if (change === undefined || !await staysInside(change.path, workspace)) return [];
  return [{ type: "diff", path: change.path, oldText: change.before, newText: change.after }];
}

/** How {@linkcode updateFor} reads a writing call's file for its diff. */
export interface UpdateReading {
  /** The conversation's read guard (Conversation.readRefusal()), asked only for such a call. */
  readRefusal: () => Promise<ReadRefusal>;
}

/**
 * The update for `event`, or undefined for events an editor is not shown (turn bounds,
 * retries, permission bookkeeping: those reach it as the prompt's answer and as requests).
 */
export async function updateFor(
  event: AgentEvent,
  workspace: string,
  reading: UpdateReading,
): Promise<SessionUpdate | undefined> {
  switch (event.type) {
    case "text_delta":
      return { sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.text } };
    case "thinking_delta":
      return { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.text } };
    case "steering":
      return { sessionUpdate: "user_message_chunk", content: { type: "text", text: event.text } };
    case "tool_start": {
      const content = event.readOnly ? [] : await proposedDiffContent(event.args, workspace, {
        refuse: await reading.readRefusal(),
      });
      return {
        sessionUpdate: "tool_call",
        toolCallId: event.callId,
        title: toolTitle(event.name, event.args),
        kind: toolKind(event.readOnly, event.args),
        status: "in_progress",
        rawInput: event.args,
        locations: toolLocations(event.args, workspace),
        ...(content.length > 0 ? { content } : {}),
      };
    }
    case "tool_input":
      // A hook's rewrite: the editor shows what runs.
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: event.callId,
        title: toolTitle(event.name, event.args),
        rawInput: event.args,
        locations: toolLocations(event.args, workspace),
      };
    case "tool_end":
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: event.callId,
        status: event.observation.status === "SUCCEEDED" ? "completed" : "failed",
        content: [outputContent(event.observation)],
      };
    default:
      return undefined;
  }
}

/** An observation as the text content of a tool call, cut to `OUTPUT_CHARS`. */
function outputContent(observation: Observation): ToolCallContent {
  const text = observationText(observation);
  const shown = text.length <= OUTPUT_CHARS
    ? text
    : `${text.slice(0, OUTPUT_CHARS)}… (${text.length - OUTPUT_CHARS} more characters)`;
  return { type: "content", content: { type: "text", text: shown } };
}

/**
 * A session's conversation replayed as updates (`session/load`): the person's messages, the
 * answers, and each tool call with its result.
 */
export function historyUpdates(messages: readonly Message[], workspace: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    if (message.role === "user" && message.content !== "") {
      updates.push({
        sessionUpdate: "user_message_chunk",
        content: { type: "text", text: message.content },
      });
    } else if (message.role === "assistant") {
      if (message.content !== "") {
        updates.push({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: message.content },
        });
      }
      for (const call of message.toolCalls ?? []) {
        const args = parseArgs(call.arguments);
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: call.id,
          title: toolTitle(call.name, args),
          kind: "other",
          status: "completed",
          rawInput: args,
          locations: toolLocations(args, workspace),
        });
      }
    } else if (message.role === "tool") {
      updates.push({
        sessionUpdate: "tool_call_update",
        toolCallId: message.toolCallId,
        status: message.content.startsWith("SUCCEEDED") ? "completed" : "failed",
        content: [{
          type: "content",
          content: { type: "text", text: message.content.slice(0, OUTPUT_CHARS) },
        }],
      });
    }
  }
  return updates;
}

/**
 * ACP's stop reason for how a turn ended: `refused` when a content filter or the model's refusal
 * ended it (tern's `CLIENT_ERROR`, ACP's `refusal`).
 */
export function stopReasonFor(exitReason: ExitReason, refused = false): StopReason {
  if (refused) return "refusal";
  switch (exitReason) {
    case "CANCELLED":
      return "cancelled";
    case "MAX_ROUNDS":
      return "max_turn_requests";
    case "LENGTH_LIMIT":
      return "max_tokens";
    default:
      return "end_turn";
  }
}

/**
 * Whether `path`, symlinks followed, is still inside `workspace` (a new file: its folder): a
 * link to a file elsewhere shows no content of that file.
 */
async function staysInside(path: string, workspace: string): Promise<boolean> {
  for (const candidate of [path, dirname(path)]) {
    try {
      const real = await Deno.realPath(candidate);
      return real === workspace || real.startsWith(workspace + sep);
    } catch {
      // Not there yet: its folder decides.
    }
  }
  return false;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= 200 ? flat : `${flat.slice(0, 199)}…`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
