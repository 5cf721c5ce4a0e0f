/**
 * The live preview of streaming Markdown: only its last lines are shown, so only its end is
 * rendered. A long unfinished code block would otherwise be highlighted whole on every token.
 */
import { cutForward } from "../core/code_points.ts";
import { plural } from "./format.ts";
import { renderMarkdown } from "./markdown.ts";
import type { Theme } from "./theme.ts";

/** Source lines rendered beyond the lines shown (blank lines and fences render to nothing). */
const SOURCE_SLACK = 8;

const FENCE = /^[ \t]*(`{3,}|~{3,})(.*)$/;

/**
 * The end of `text` rendered, at most `maxLines` lines, the first a dim `… N lines above`
 * marker when lines were left out (N counts rendered lines, or source lines for the part
 * that was not rendered). Of a long line (a paragraph still being written) only the last
 * characters that could fill the lines are rendered, the marker then reading `… N lines and
 * M characters above` (or `… M characters above`): every frame renders a bounded amount of
 * text, however long the line grows; the whole is rendered once it is finished. Never throws.
 */
export function liveMarkdown(
  text: string,
  width: number,
  theme: Theme,
  maxLines: number,
): string[] {
  const { tail, skipped, cut } = markdownTail(text, maxLines + SOURCE_SLACK, {
    maxChars: LIVE_CHARS_PER_CELL * Math.max(maxLines, 1) * Math.max(width, 20),
  });
  let lines = renderMarkdown(tail, width, theme);
  if (skipped > 0 || cut > 0 || lines.length > maxLines) {
    const kept = lines.slice(-Math.max(0, maxLines - 1));
    const above = skipped + lines.length - kept.length;
    const parts = [...above > 0 || cut === 0 ? [plural(above, "line")] : []];
    if (cut > 0) parts.push(plural(cut, "character"));
    lines = [theme.dim(`… ${parts.join(" and ")} above`), ...kept];
  }
  return lines;
}

/** Source characters rendered live per cell shown (markup and wrapping take some). */
const LIVE_CHARS_PER_CELL = 4;

/**
 * The last `count` source lines of `text`, preceded by the opening fence line when they are
 * inside a code block, and how many source lines were left out (`skipped`). With `maxChars`,
 * of those lines only the last `maxChars` characters are kept (`cut` counts the others; the
 * opening fence line is kept whole, up to `maxChars` characters).
 */
export function markdownTail(
  text: string,
  count: number,
  options: { maxChars?: number } = {},
): { tail: string; skipped: number; cut: number } {
  const { tail, skipped } = tailLines(text, count);
  const max = options.maxChars ?? Infinity;
  if (tail.length <= max) return { tail, skipped, cut: 0 };
  const newline = tail.indexOf("\n");
  const fence = newline >= 0 && newline <= max && FENCE.test(tail.slice(0, newline))
    ? tail.slice(0, newline + 1)
    : "";
  const start = cutForward(tail, tail.length - max + fence.length);
  return { tail: fence + tail.slice(start), skipped, cut: start - fence.length };
}

function tailLines(text: string, count: number): { tail: string; skipped: number } {
  const lines = text.split("\n");
  if (lines.length <= count) return { tail: text, skipped: 0 };
  const cut = lines.length - count;
  let open: { line: string; char: string; length: number } | undefined;
  for (let i = 0; i < cut; i++) {
    const match = FENCE.exec(lines[i]);
    if (!match) continue;
    const marker = match[1];
    if (open === undefined) {
      if (!(marker[0] === "`" && match[2].includes("`"))) {
        open = { line: lines[i], char: marker[0], length: marker.length };
      }
    } else if (marker[0] === open.char && marker.length >= open.length && match[2].trim() === "") {
      open = undefined;
    }
  }
  const rest = lines.slice(cut).join("\n");
  // The opening fence is rendered again (as the block's label, if any), so it is not skipped.
  return open === undefined
    ? { tail: rest, skipped: cut }
    : { tail: `${open.line}\n${rest}`, skipped: cut - 1 };
}
