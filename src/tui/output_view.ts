/** A finished command's whole output as transcript lines, for Ctrl-O and `/output`. */
import { cleanText } from "./format.ts";
import type { Theme } from "./theme.ts";
import type { KeptOutput } from "./view.ts";
import { truncateToWidth, wrapText } from "./width.ts";

/**
 * `kept` as lines of at most `width` cells: a dim header naming the call and the line count,
 * then every line of the output, wrapped (sanitized again: it may come from anywhere).
 */
export function keptOutputLines(kept: KeptOutput, width: number, theme: Theme): string[] {
  const rows = cleanText(kept.text).split("\n").map((line) => line.trimEnd());
  while (rows.length > 0 && rows.at(-1) === "") rows.pop();
  const count = `${rows.length} line${rows.length === 1 ? "" : "s"}`;
  const header = theme.dim(`── output ${kept.number} · ${cleanText(kept.call)} · ${count}`);
  const body = rows.flatMap((row) => row === "" ? [""] : wrapText(row, Math.max(1, width - 2)))
    .map((row) => truncateToWidth(`${theme.dim("│")} ${row}`, width));
  return [truncateToWidth(header, width), ...body];
}
