/** Sessions as text for people: one line per entry (the tree) and the transcript as Markdown. */
import type { Message } from "../core/messages.ts";
import type { ReplayState } from "../session/replay.ts";
import type { SessionEntry, SessionHeader } from "../session/types.ts";
import { visibleText } from "../core/terminal_text.ts";

/** `user: fix the tests`, `model gpt-4.1`, `compaction 52000 → 9000 tokens`: an entry in brief. */
export function describeEntry(entry: SessionEntry): string {
  switch (entry.type) {
    case "message":
      return describeMessage(entry.message);
    case "model":
      return `model ${visibleText(entry.model)}`;
    case "thinking":
      return `thinking ${entry.level}`;
    case "mode":
      return `mode ${entry.mode}`;
    case "profile":
      return `profile ${entry.profile}`;
    case "permission":
      return entry.change.kind === "approval"
        ? `permission: allow ${entry.change.key} for the session`
        : `permission: grant ${JSON.stringify(entry.change.extra)}`;
    case "compaction":
      return `compaction ${entry.tokensBefore} → ${entry.tokensAfter} tokens` +
        `${entry.fallback ? " (fallback)" : ""}`;
    case "branch":
      return `branch from ${entry.fromId ?? "(start)"}${entry.summary ? " (summary kept)" : ""}`;
    case "label":
      return `label ${entry.targetId}: ${visibleText(entry.label)}`;
    case "pins":
      return `pins: ${entry.pins.length} pinned instruction${entry.pins.length === 1 ? "" : "s"}`;
    case "subagent": {
      const data = (entry.data ?? {}) as Record<string, unknown>;
      const status = data.kind === "spawn"
        ? `→ child ${String(data.childSessionId).slice(0, 8)}`
        : data.kind === "completion"
        ? String(data.status)
        : String((data.final as Record<string, unknown> | undefined)?.status ?? "");
      return visibleText(`subagent ${String(data.kind)} ${String(data.taskName ?? "")} ${status}`)
        .trim();
    }
    case "plan":
    case "consolidation":
      return entry.type;
    case "unknown":
      return `(unknown type "${String(entry.raw.type)}", kept)`;
  }
}

function describeMessage(message: Message): string {
  switch (message.role) {
    case "assistant": {
      // Names as facts: made visible, so a name cannot break the line or hide part of itself.
      const calls = (message.toolCalls ?? []).map((call) => visibleText(call.name));
      const text = message.content.trim() === "" ? "" : ` ${brief(message.content, 70)}`;
      return `assistant:${text}${calls.length ? ` [calls ${calls.join(", ")}]` : ""}`;
    }
    case "tool":
      return `tool ${visibleText(message.name)}: ${brief(message.content, 60)}`;
    default:
      return `${message.role}: ${brief(message.content, 80)}`;
  }
}

/** The conversation the model would see at the leaf, as Markdown. */
export function transcriptMarkdown(header: SessionHeader, state: ReplayState): string {
  const parts = [`# Session ${header.id}`, "", `Directory: \`${header.cwd}\`  `];
  // The model's name was a setting (perhaps a repository's): one line, shown as it is.
  const model = state.model ? `  \nModel: ${visibleText(state.model)}` : "";
  parts.push(`Started: ${header.created}${model}`, "");
  for (const { message } of state.items) {
    switch (message.role) {
      case "user":
        parts.push("## User", "", noHeadings(message.content), "");
        break;
      case "assistant":
        parts.push("## Assistant", "");
        if (message.content.trim() !== "") parts.push(noHeadings(message.content), "");
        for (const call of message.toolCalls ?? []) {
          parts.push(
            `Tool call ${codeSpan(call.name)} (${codeSpan(call.id)}):`,
            "",
            fence(call.arguments),
            "",
          );
        }
        break;
      case "tool":
        parts.push(
          `### Result of ${codeSpan(message.name)} (${codeSpan(message.toolCallId)})`,
          "",
        );
        parts.push(fence(message.content), "");
        break;
      case "system":
        parts.push("## System", "", noHeadings(message.content), "");
        break;
    }
  }
  return parts.join("\n");
}

/** A fenced block whose fence is longer than any backtick run inside. */
function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}\n${text}\n${ticks}`;
}

/**
 * `text` with every line that Markdown would read as a heading (`## User`, or a `---` / `===`
 * underline) escaped: only the transcript's own headings say who speaks. Lines inside a fenced
 * code block are code, and stay as they are; a fence the text leaves open is closed after it.
 */
function noHeadings(text: string): string {
  let fence: string | undefined;
  // A lone CR ends a line too (for CommonMark, and for the terminal, where the output's CRs
  // become line breaks): split on every kind, so none hides a heading inside a line.
  const lines = text.split(/\r\n|\r|\n/).map((line) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (opening !== undefined && opening[0] === fence[0] && opening.length >= fence.length) {
        fence = undefined;
      }
      return line;
    }
    if (opening !== undefined) {
      fence = opening;
      return line;
    }
    return /^ {0,3}(#{1,6}(\s|$)|(-+|=+)\s*$)/.test(line) ? `\\${line}` : line;
  });
  // Closed here, so the turns after it are not read as code.
  if (fence !== undefined) lines.push(fence);
  return lines.join("\n");
}

/** `text` made visible, in a code span its own backticks cannot end. */
function codeSpan(text: string): string {
  const shown = visibleText(text);
  const longest = Math.max(0, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = shown.startsWith("`") || shown.endsWith("`") ? " " : "";
  return `${ticks}${pad}${shown}${pad}${ticks}`;
}

function brief(text: string, max: number): string {
  const flat = text.replace(/[\s\u0085]+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
