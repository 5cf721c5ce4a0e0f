/** Head-and-tail trimming of long text, for old tool outputs and oversized summary requests. */
import { cutBack, cutForward } from "../core/code_points.ts";
import type { ContextItem } from "./compaction_types.ts";

/**
 * Cuts `text` to at most `maxChars` characters (UTF-16 units; never less than the marker's
 * own length, about 60), keeping about 60% head and 40%
 * tail and putting a marker in the middle that says how many characters and lines were cut.
 * Text within the limit is returned unchanged. `what` names the text in the marker.
 */
export function trimMiddle(text: string, maxChars: number, what = "text"): string {
  if (text.length <= maxChars) return text;
  // The marker's length depends on the counts, which depend on the marker: size it for the
  // worst case (everything cut), then fill the rest with text.
  const markerFor = (chars: number, lines: number) =>
    `\n[... ${chars} characters (${lines} lines) of ${what} cut ...]\n`;
  const room = Math.max(0, maxChars - markerFor(text.length, countLines(text)).length);
  const headEnd = cutBack(text, Math.ceil(room * 0.6));
  const tailStart = cutForward(text, text.length - (room - headEnd));
  const cut = text.slice(headEnd, tailStart);
  return text.slice(0, headEnd) + markerFor(cut.length, countLines(cut)) + text.slice(tailStart);
}

/**
 * The items with every tool output longer than `maxChars` cut to `maxChars` (head and tail
 * kept, a marker saying how much was cut). Other items are returned as they are; the input is
 * not modified.
 */
export function trimToolOutputs(items: ContextItem[], maxChars: number): ContextItem[] {
  return items.map((item) => {
    const { message } = item;
    if (message.role !== "tool" || message.content.length <= maxChars) return item;
    return {
      id: item.id,
      message: { ...message, content: trimMiddle(message.content, maxChars, "tool output") },
    };
  });
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
