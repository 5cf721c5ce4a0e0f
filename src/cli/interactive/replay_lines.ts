/** A resumed or re-branched session's conversation, as transcript lines for scrollback. */
import type { ReplayState } from "../../session/replay.ts";
import { visibleText } from "../../core/terminal_text.ts";
import { renderMarkdown } from "../../tui/markdown.ts";
import type { Theme } from "../../tui/theme.ts";
import { truncateToWidth } from "../../tui/width.ts";
import type { TranscriptView } from "../../tui/view.ts";
import { userVoice, voiceLine } from "../../session/voice.ts";

/** Messages shown when a session is resumed; earlier ones are counted, not shown. */
const SHOWN_MESSAGES = 40;

/**
 * The path's user and assistant messages (tool calls as one dim line each). Only the person's
 * own messages are drawn as theirs (`›`); what tern gave the model as a user message (a
 * summary, a branch note, a subagent's result) is one dim line of tern's.
 */
export function transcriptLines(
  state: ReplayState,
  view: TranscriptView,
  theme: Theme,
  width: number,
  options: TranscriptOptions = {},
): string[] {
  return transcriptBlock(state, view, theme, width, options).lines;
}

/** How a replayed transcript is drawn. */
export interface TranscriptOptions {
  /**
   * Masks keys in what is shown (the keys tern holds now and the key formats): a session keeps
   * a key unmasked when tern did not hold it then. Default: shown as kept.
   */
  mask?: (text: string) => string;
}

/**
 * `transcriptLines`, with `blocks`: its messages, each drawn again at any width (for the redraw
 * of what is still on screen after a resize; they do not touch the view).
 */
export function transcriptBlock(
  state: ReplayState,
  view: TranscriptView,
  theme: Theme,
  width: number,
  options: TranscriptOptions = {},
): { lines: string[]; blocks: Array<(width: number) => string[]> } {
  const mask = options.mask ?? ((text: string) => text);
  const messages = state.items.map((item) => item.message).filter((m) => m.role !== "tool");
  const shown = messages.slice(-SHOWN_MESSAGES);
  const parts: Array<(width: number) => string[]> = [];
  if (messages.length > shown.length) {
    const line = theme.dim(`… ${messages.length - shown.length} earlier messages`);
    parts.push(() => [line]);
  }
  for (const message of shown) {
    if (message.role === "user") {
      const content = mask(message.content);
      const voice = userVoice(content);
      if (voice.from === "person") {
        view.user(content, width);
        parts.push(...view.blocks());
      } else {
        // Drawn as tern's own dim line, never as a `›` message the person did not send: the
        // model wrote a summary, a child model a subagent's answer.
        const line = theme.dim(voiceLine(voice));
        parts.push((w) => [truncateToWidth(line, w)]);
      }
    } else if (message.role === "assistant") {
      const content = mask(message.content);
      if (content.trim() !== "") {
        const first = renderMarkdown(content, width, theme);
        parts.push((w) => w === width ? first : renderMarkdown(content, w, theme));
      }
      for (const call of message.toolCalls ?? []) {
        // The name and arguments as written, made visible (never stripped): the line names
        // what ran, and a sequence cannot hide its payload. It starts at the first column with
        // a mark of tern's, where the model's text never starts a row (`renderMarkdown`).
        // Masked before the cut: a key cut in two would no longer match.
        const args = visibleText(mask(call.arguments.slice(0, 2_000)).slice(0, 1_000));
        const line = theme.dim(`↳ ${visibleText(mask(call.name))} ${args}`);
        parts.push((w) => [truncateToWidth(line, w)]);
      }
    }
  }
  return { lines: parts.flatMap((part) => part(width)), blocks: parts };
}
