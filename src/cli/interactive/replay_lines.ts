/** A resumed or re-branched session's conversation, as transcript lines for scrollback. */
import type { ReplayState } from "../../session/replay.ts";
import { oneLine } from "../../tui/format.ts";
import { renderMarkdown } from "../../tui/markdown.ts";
import type { Theme } from "../../tui/theme.ts";
import { truncateToWidth } from "../../tui/width.ts";
import type { TranscriptView } from "../../tui/view.ts";

/** Messages shown when a session is resumed; earlier ones are counted, not shown. */
const SHOWN_MESSAGES = 40;

/** The path's user and assistant messages (tool calls as one dim line each). */
export function transcriptLines(
  state: ReplayState,
  view: TranscriptView,
  theme: Theme,
  width: number,
): string[] {
  const messages = state.items.map((item) => item.message).filter((m) => m.role !== "tool");
  const shown = messages.slice(-SHOWN_MESSAGES);
  const lines: string[] = [];
  if (messages.length > shown.length) {
    lines.push(theme.dim(`… ${messages.length - shown.length} earlier messages`));
  }
  for (const message of shown) {
    if (message.role === "user") {
      lines.push(...view.user(message.content, width));
    } else if (message.role === "assistant") {
      if (message.content.trim() !== "") {
        lines.push(...renderMarkdown(message.content, width, theme));
      }
      for (const call of message.toolCalls ?? []) {
        const text = oneLine(`${call.name} ${call.arguments}`);
        lines.push(truncateToWidth(theme.dim(`  ↳ ${text}`), width));
      }
    }
  }
  return lines;
}
