/** Cutting styled lines to a width for the content renderers (Markdown, diffs). */
import { truncateToWidth } from "./width.ts";

/**
 * `line` cut to at most `width` cells with a trailing "…", like `truncateToWidth`, but a line
 * without escape sequences stays free of them (no reset is added), so plain output stays plain.
 */
export function clipToWidth(line: string, width: number): string {
  const cut = truncateToWidth(line, width);
  return cut === line || line.includes("\x1b") ? cut : cut.replace("\x1b[0m", "");
}
