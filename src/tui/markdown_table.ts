/** GitHub tables for the Markdown renderer: box-drawn, columns fitted to the screen width. */
import type { Tokens } from "marked";
import { clipToWidth } from "./clip.ts";
import { renderInline } from "./markdown_inline.ts";
import type { Theme } from "./theme.ts";
import { visibleWidth } from "./width.ts";

type Align = "center" | "left" | "right" | null;

/**
 * `table` as box-drawn lines at most `width` cells wide. Columns keep their natural width when
 * the table fits; otherwise the widest columns shrink first and their cells are cut with "…".
 */
export function renderTable(table: Tokens.Table, width: number, theme: Theme): string[] {
  const header = table.header.map((cell) => theme.bold(cellText(cell, theme)));
  const rows = table.rows.map((row) => row.map((cell) => cellText(cell, theme)));
  const count = header.length;
  const natural = header.map((cell, column) =>
    Math.max(1, visibleWidth(cell), ...rows.map((row) => visibleWidth(row[column] ?? "")))
  );
  const room = width - (3 * count + 1);
  if (room < count) return narrowTable(header, rows, width, theme);
  const widths = fitColumns(natural, room);
  const rule = (left: string, middle: string, right: string) =>
    theme.dim(left + widths.map((w) => "─".repeat(w + 2)).join(middle) + right);
  const bar = theme.dim("│");
  const line = (cells: string[]) =>
    `${bar} ${
      widths.map((w, column) => align(cells[column] ?? "", w, table.align[column])).join(
        ` ${bar} `,
      )
    } ${bar}`;
  return [
    rule("┌", "┬", "┐"),
    line(header),
    rule("├", "┼", "┤"),
    ...rows.map(line),
    rule("└", "┴", "┘"),
  ];
}

function cellText(cell: Tokens.TableCell, theme: Theme): string {
  return renderInline(cell.tokens, theme).replaceAll("\n", " ");
}

/** Column widths summing to at most `room`: small columns keep their width, wide ones share. */
function fitColumns(natural: number[], room: number): number[] {
  const total = natural.reduce((sum, w) => sum + w, 0);
  if (total <= room) return natural;
  const widths = [...natural];
  const order = natural.map((_, column) => column).sort((a, b) => natural[a] - natural[b]);
  let left = room;
  order.forEach((column, index) => {
    const share = Math.floor(left / (order.length - index));
    widths[column] = Math.max(1, Math.min(natural[column], share));
    left -= widths[column];
  });
  return widths;
}

function align(text: string, width: number, how: Align): string {
  const cut = clipToWidth(text, width);
  const gap = width - visibleWidth(cut);
  if (how === "right") return " ".repeat(gap) + cut;
  if (how === "center") {
    const before = Math.floor(gap / 2);
    return " ".repeat(before) + cut + " ".repeat(gap - before);
  }
  return cut + " ".repeat(gap);
}

/** Too narrow for borders: one line per row, cells separated by " │ ", cut to the width. */
function narrowTable(header: string[], rows: string[][], width: number, theme: Theme): string[] {
  const join = (cells: string[]) => clipToWidth(cells.join(theme.dim(" │ ")), width);
  return [join(header), theme.dim("─".repeat(Math.max(0, width))), ...rows.map(join)];
}
