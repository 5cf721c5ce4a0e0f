/**
 * Grapheme-level text arithmetic for the editor: cursor stops (a grapheme, or a whole atomic
 * span such as a paste marker), word boundaries and soft wrapping of one logical line into rows
 * of at most a given number of cells. Offsets are UTF-16 indices into the line.
 */
import { exactWidth, widthEpoch } from "./width.ts";

/** A range `[start, end)` of UTF-16 offsets in one line. */
export interface Span {
  start: number;
  end: number;
}

/** Created on first use: the first Intl.Segmenter starts ICU (`bench/results/code_costs.md`). */
let segmenter: Intl.Segmenter | undefined;
/** Widths of graphemes measured by the width libraries (not by the upper bound used before). */
const widths = new Map<string, number>();
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** The graphemes of `line` with their offsets. */
export function graphemes(line: string): Array<{ start: number; text: string }> {
  // Printable ASCII characters are graphemes of their own.
  if (!NOT_PRINTABLE_ASCII.test(line)) {
    return Array.from(line, (text, start) => ({ start, text }));
  }
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return Array.from(segmenter.segment(line), (part) => ({ start: part.index, text: part.segment }));
}

/** Cells one grapheme takes in the editor (a tab is shown as one space). */
export function cellWidth(grapheme: string): number {
  if (grapheme.length === 1) {
    const code = grapheme.charCodeAt(0);
    if (code >= 0x20 && code < 0x7f) return 1;
    if (code === 0x09) return 1;
  }
  let width = widths.get(grapheme);
  if (width === undefined) {
    width = exactWidth(grapheme);
    if (widths.size < 4096 && widthEpoch() > 0) widths.set(grapheme, width);
  }
  return width;
}

/** Cells `text` takes in the editor. */
export function textWidth(text: string): number {
  let cells = 0;
  for (const { text: grapheme } of graphemes(text)) cells += cellWidth(grapheme);
  return cells;
}

/** `offset` moved out of any atom it falls inside, towards the atom's start or end. */
export function snap(offset: number, atoms: Span[], towards: "start" | "end"): number {
  const atom = atoms.find((span) => span.start < offset && offset < span.end);
  return atom ? atom[towards] : offset;
}

/** The cursor stop before `offset`: the previous grapheme, or a whole atom ending there. */
export function stepLeft(line: string, offset: number, atoms: Span[]): number {
  if (offset <= 0) return 0;
  const atom = atoms.find((span) => span.end === offset);
  if (atom) return atom.start;
  let previous = 0;
  for (const { start } of graphemes(line)) {
    if (start >= offset) break;
    previous = start;
  }
  return snap(previous, atoms, "start");
}

/** The cursor stop after `offset`: the next grapheme, or a whole atom starting there. */
export function stepRight(line: string, offset: number, atoms: Span[]): number {
  if (offset >= line.length) return line.length;
  const atom = atoms.find((span) => span.start === offset);
  if (atom) return atom.end;
  for (const { start, text } of graphemes(line)) {
    if (start + text.length > offset) return snap(start + text.length, atoms, "end");
  }
  return line.length;
}

/** 0 for whitespace, 1 for word characters, 2 for anything else. */
function wordClass(grapheme: string): number {
  if (/^\s/u.test(grapheme)) return 0;
  return /^[\p{L}\p{N}_]/u.test(grapheme) ? 1 : 2;
}

/** Start of the word before `offset` (whitespace skipped first, then one run of a class). */
export function wordLeft(line: string, offset: number, atoms: Span[]): number {
  const parts = graphemes(line).filter((part) => part.start < offset);
  let i = parts.length - 1;
  while (i >= 0 && wordClass(parts[i].text) === 0) i--;
  if (i < 0) return 0;
  const kind = wordClass(parts[i].text);
  while (i > 0 && wordClass(parts[i - 1].text) === kind) i--;
  return snap(parts[i].start, atoms, "start");
}

/** End of the word after `offset` (whitespace skipped first, then one run of a class). */
export function wordRight(line: string, offset: number, atoms: Span[]): number {
  const parts = graphemes(line).filter((part) => part.start >= offset);
  let i = 0;
  while (i < parts.length && wordClass(parts[i].text) === 0) i++;
  if (i >= parts.length) return line.length;
  const kind = wordClass(parts[i].text);
  while (i < parts.length && wordClass(parts[i].text) === kind) i++;
  return snap(i < parts.length ? parts[i].start : line.length, atoms, "end");
}

/**
 * Rows of `line` each at most `width` cells: broken after the last space that fits, or inside a
 * word longer than the row. Always at least one row; rows cover the line without gaps. An offset
 * equal to a row's end belongs to the next row, except on the last row.
 */
export function wrapLine(line: string, width: number): Span[] {
  const rows: Span[] = [];
  let start = 0;
  let used = 0;
  let breakAt = -1;
  let usedAtBreak = 0;
  for (const part of graphemes(line)) {
    const cells = cellWidth(part.text);
    while (used + cells > width && part.start > start) {
      if (breakAt > start) {
        rows.push({ start, end: breakAt });
        start = breakAt;
        used -= usedAtBreak;
      } else {
        rows.push({ start, end: part.start });
        start = part.start;
        used = 0;
      }
      breakAt = -1;
    }
    used += cells;
    if (part.text === " ") {
      breakAt = part.start + 1;
      usedAtBreak = used;
    }
  }
  rows.push({ start, end: line.length });
  return rows;
}

/** Index of the row of `rows` (from `wrapLine`) that holds `offset`. */
export function rowOf(rows: Span[], offset: number): number {
  for (let i = 0; i < rows.length - 1; i++) {
    if (offset < rows[i].end) return i;
  }
  return rows.length - 1;
}

/**
 * The offset in `row` whose column is closest to `cells` without passing it; never the row's
 * end unless it is the line's last row (that offset would show on the next row).
 */
export function offsetAtCells(line: string, row: Span, cells: number, lastRow: boolean): number {
  let used = 0;
  let offset = row.start;
  for (const part of graphemes(line.slice(row.start, row.end))) {
    const next = used + cellWidth(part.text);
    if (next > cells) break;
    const end = row.start + part.start + part.text.length;
    if (end === row.end && !lastRow) break;
    used = next;
    offset = end;
  }
  return offset;
}
