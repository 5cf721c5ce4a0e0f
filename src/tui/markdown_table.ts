/** GitHub tables for the Markdown renderer: box-drawn, columns fitted to the screen width. */
import type { Tokens } from "marked";
import { renderInline } from "./markdown_inline.ts";
import type { Theme } from "./theme.ts";
import { visibleWidth, wrapTrimmed } from "./width.ts";

type Align = "center" | "left" | "right" | null;

/**
 * `table` as box-drawn lines at most `width` cells wide. Columns keep their natural width when
 * the table fits; otherwise the widest columns shrink first and their cells wrap onto more
 * lines: no text of a cell is ever cut.
 */
export function renderTable(table: Tokens.Table, width: number, theme: Theme): string[] {
  const header = table.header.map((cell) => theme.bold(cellText(cell, theme)));
  const rows = table.rows.map((row) => row.map((cell) => cellText(cell, theme)));
  const count = header.length;
  const natural = header.map((cell, column) =>
    Math.max(1, visibleWidth(cell), ...rows.map((row) => visibleWidth(row[column] ?? "")))
  );
  const room = width - (3 * count + 1);
  if (room < 2 * count) return narrowTable(header, rows, width, theme);
  const widths = fitColumns(natural, room);
  const rule = (left: string, middle: string, right: string) =>
    theme.dim(left + widths.map((w) => "─".repeat(w + 2)).join(middle) + right);
  const bar = theme.dim("│");
  const lines = (cells: string[]) => {
    const wrapped = widths.map((w, column) => wrapTrimmed(cells[column] ?? "", w));
    const height = Math.max(1, ...wrapped.map((cell) => cell.length));
    return Array.from(
      { length: height },
      (_, row) =>
        `${bar} ${
          widths.map((w, column) => align(wrapped[column][row] ?? "", w, table.align[column]))
            .join(` ${bar} `)
        } ${bar}`,
    );
  };
  return [
    rule("┌", "┬", "┐"),
    ...lines(header),
    rule("├", "┼", "┤"),
    ...rows.flatMap(lines),
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
  const gap = Math.max(0, width - visibleWidth(text));
  if (how === "right") return " ".repeat(gap) + text;
  if (how === "center") {
    const before = Math.floor(gap / 2);
    return " ".repeat(before) + text + " ".repeat(gap - before);
  }
  return text + " ".repeat(gap);
}

/**
 * Too narrow for columns: each row as a block of "header: value" lines, wrapped to the width,
 * rows separated by a rule.
 */
function narrowTable(header: string[], rows: string[][], width: number, theme: Theme): string[] {
  const rule = theme.dim("─".repeat(Math.max(1, width)));
  return rows.flatMap((row, index) => [
    ...(index > 0 ? [rule] : []),
    ...header.flatMap((name, column) => wrapTrimmed(`${name}: ${row[column] ?? ""}`, width)),
  ]);
}
