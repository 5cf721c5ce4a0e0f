/**
 * Terminal cell arithmetic on styled text: how wide a string is on screen (East Asian wide
 * characters and emoji take two cells, escape sequences none), wrapping to a width and cutting
 * to a width without breaking escape sequences.
 */
import stringWidth from "string-width";
import wrapAnsi from "wrap-ansi";
import sliceAnsi from "slice-ansi";

/** Cells `text` takes on screen; escape sequences count zero. */
export function visibleWidth(text: string): number {
  return stringWidth(text);
}

/**
 * `text` (one or more lines) wrapped to `width` cells: at word boundaries where possible, hard
 * inside words longer than the width. Styles carry over line breaks.
 */
export function wrapText(text: string, width: number): string[] {
  const cells = Math.max(1, width);
  return wrapAnsi(text, cells, { hard: true, trim: false, wordWrap: true }).split("\n");
}

/** `line` cut to at most `width` cells, ending with `ellipsis` when it was cut. */
export function truncateToWidth(line: string, width: number, ellipsis = "…"): string {
  if (width <= 0) return "";
  if (stringWidth(line) <= width) return line;
  const room = Math.max(0, width - stringWidth(ellipsis));
  const cut = sliceAnsi(line, 0, room);
  // A style cut open would run into the ellipsis and beyond: close everything.
  return (line.includes("\x1b") ? cut + "\x1b[0m" : cut) + ellipsis;
}

/** `line` padded with spaces to exactly `width` cells (cut first when longer). */
export function padToWidth(line: string, width: number): string {
  const cut = truncateToWidth(line, width);
  return cut + " ".repeat(Math.max(0, width - stringWidth(cut)));
}
