/** Sessions as text for people: one line per entry (the tree) and the transcript as Markdown. */
import type { Message } from "../core/messages.ts";
import type { ReplayState } from "../session/replay.ts";
import { type UserVoice, userVoice } from "../session/voice.ts";
import type { SessionEntry, SessionHeader } from "../session/types.ts";
import { visibleText } from "../core/terminal_text.ts";

/**
 * `user: fix the tests`, `model gpt-4.1`, `compaction 52000 → 9000 tokens`: an entry in brief,
 * on one line. What the file recorded (names, levels, keys, the ids an entry points to) is shown
 * made visible (`visibleText`): a session file may come from anywhere, and a line break in a
 * value would draw a row of its own.
 */
export function describeEntry(entry: SessionEntry): string {
  switch (entry.type) {
    case "message":
      return describeMessage(entry.message);
    case "model":
      return `model ${visibleText(entry.model)}`;
    case "thinking":
      return `thinking ${visibleText(entry.level)}`;
    case "mode":
      return `mode ${visibleText(entry.mode)}`;
    case "profile":
      return `profile ${visibleText(entry.profile)}`;
    case "permission":
      return entry.change.kind === "approval"
        ? `permission: allow ${visibleText(entry.change.key)} for the session`
        : `permission: grant ${visibleText(JSON.stringify(entry.change.extra))}`;
    case "compaction":
      return `compaction ${entry.tokensBefore} → ${entry.tokensAfter} tokens` +
        `${entry.fallback ? " (fallback)" : ""}`;
    case "branch":
      return `branch from ${entry.fromId === null ? "(start)" : shownId(entry.fromId)}` +
        `${entry.summary ? " (summary kept)" : ""}`;
    case "label":
      return `label ${shownId(entry.targetId)}: ${visibleText(entry.label)}`;
    case "pins":
      return `pins: ${entry.pins.length} pinned instruction${entry.pins.length === 1 ? "" : "s"}`;
    case "subagent": {
      const data = (entry.data ?? {}) as Record<string, unknown>;
      const final = data.final as Record<string, unknown> | null | undefined;
      const status = data.kind === "spawn"
        ? `→ child ${recorded(data.childSessionId).slice(0, 8)}`
        : data.kind === "completion"
        ? recorded(data.status)
        : recorded(typeof final === "object" ? final?.status : undefined);
      return visibleText(`subagent ${recorded(data.kind)} ${recorded(data.taskName)} ${status}`)
        .trim();
    }
    case "plan":
    case "consolidation":
      return entry.type;
    case "unknown":
      return `(unknown type "${visibleText(String(entry.raw.type))}", kept)`;
  }
}

/**
 * An entry or session id as a person reads it, on one line: tern writes hex and UUIDs, but a
 * file from elsewhere (or an old import of one) may hold any string there.
 */
export function shownId(id: unknown): string {
  return visibleText(String(id));
}

/**
 * A value a record holds, as text: a string as it is, nothing as "", anything else as its JSON
 * (a file from elsewhere may hold an object there, even one whose `toString` is no function).
 */
export function recorded(value: unknown): string {
  if (typeof value === "string") return value;
  return value === undefined ? "" : JSON.stringify(value);
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

/** The heading of a user-role message in a transcript: who speaks, by its voice. */
const USER_HEADINGS: Record<UserVoice["from"], string> = {
  person: "## User",
  summary: "## Summary of the earlier conversation (given to the model)",
  branch: "## Note from tern on a branch set aside (given to the model)",
  subagent: "## Subagent result (given to the model)",
  hook: "## A Stop hook's reason to go on (given to the model)",
  diagnostics: "## Diagnostics of checks that ended late (given to the model)",
};

/**
 * The conversation the model would see at the leaf, as Markdown. Only tern's own lines start at
 * the margin: the headings that say who speaks (`## User` for the person's own messages only,
 * `## Assistant`, `## System`, `### Result of …`, and for what tern gave the model as user
 * messages, a summary, a branch note or a subagent's result, headings that say so), the tool call lines and the session's facts (each in a code span, made
 * visible). Every text the session recorded (a message, a call's arguments, a tool's result) is
 * shown as it was written, each of its lines indented by four spaces: an indented code block,
 * which only a line at the margin ends. So nothing in it (a heading, raw HTML, a code fence of
 * its own however it is spelled) is read as Markdown, reaches the lines after it, or looks like
 * one of tern's lines where a person reads the text itself.
 */
export function transcriptMarkdown(header: SessionHeader, state: ReplayState): string {
  const parts = [
    `# Session ${codeSpan(String(header.id))}`,
    "",
    // Header fields are what the file says (it may be one a repository ships): each a fact.
    `Directory: ${codeSpan(String(header.cwd))}  `,
  ];
  const model = state.model ? `  \nModel: ${codeSpan(state.model)}` : "";
  parts.push(`Started: ${codeSpan(String(header.created))}${model}`, "");
  for (const { message } of state.items) {
    switch (message.role) {
      case "user":
        // Only the person's own messages are theirs (see userVoice).
        parts.push(USER_HEADINGS[userVoice(message.content).from], "");
        parts.push(indented(message.content), "");
        break;
      case "assistant":
        parts.push("## Assistant", "");
        if (message.content.trim() !== "") parts.push(indented(message.content), "");
        for (const call of message.toolCalls ?? []) {
          parts.push(
            `Tool call ${codeSpan(call.name)} (${codeSpan(call.id)}):`,
            "",
            indented(call.arguments),
            "",
          );
        }
        break;
      case "tool":
        parts.push(
          `### Result of ${codeSpan(message.name)} (${codeSpan(message.toolCallId)})`,
          "",
        );
        parts.push(indented(message.content), "");
        break;
      case "system":
        parts.push("## System", "", indented(message.content), "");
        break;
    }
  }
  return parts.join("\n");
}

/**
 * `text` as an indented code block: each of its lines after four spaces (CommonMark ends a line
 * at a lone CR too, so it does here), an empty line left empty. No line of it is at the margin,
 * so none can end the block; the blank line before it is the caller's.
 */
function indented(text: string): string {
  return text.split(/\r\n|\r|\n/).map((line) => line === "" ? "" : `    ${line}`).join("\n");
}

/** `text` made visible, in a code span its own backticks cannot end. */
function codeSpan(text: string): string {
  const shown = visibleText(text);
  const longest = Math.max(0, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = shown.startsWith("`") || shown.endsWith("`") ? " " : "";
  return `${ticks}${pad}${shown}${pad}${ticks}`;
}

/**
 * `text` on one row of at most `max` characters, made visible (`visibleText`): a run of blank
 * glyphs (U+2800, U+3164) would pad the row until the terminal wraps what follows to the first
 * column, where it reads as a row of tern's (`* e0000009 user: I approve`).
 */
function brief(text: string, max: number): string {
  // Only the start of a long text is looked at; a text cut there always ends in "…".
  const head = text.slice(0, 10_000);
  const chars = Array.from(visibleText(head.replace(/[\s\u0085]+/g, " ").trim()));
  if (chars.length <= max && head.length === text.length) return chars.join("");
  return `${chars.slice(0, max - 1).join("")}…`;
}
