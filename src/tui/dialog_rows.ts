/**
 * Rows of the permission question that need care about where they start and how wide they
 * are: the facts (a command's lines, a wrapped path), the key hints and cut lists.
 */
import type { Theme } from "./theme.ts";
import { visibleWidth, wrapStrict } from "./width.ts";

/** What starts each row of a fact after its first. */
const FACT_GUTTER = "┊";

/**
 * The rows of one fact (`lines`: a command's lines, or one line), wrapped as no terminal draws
 * wider (`wrapStrict`: a fact's end is never lost at the edge). A fact that takes more than
 * one row has every row after the first behind a dim `┊ `, so a command's next line or the
 * rest of a long path never starts a row where the dialog's own rows start (`[y] allow once`,
 * `─ Allow …`, tern's reason, the model's quoted reason).
 */
export function factRows(lines: readonly string[], width: number, t: Theme): string[] {
  if (lines.length === 1 && fits(lines[0], width)) return [...lines];
  // Three cells for the gutter: a terminal may draw `┊` two cells wide.
  const rows = lines.flatMap((line) => wrapStrict(line, Math.max(1, width - 3)));
  return rows.map((row, i) => i === 0 ? row : `${t.dim(FACT_GUTTER)} ${row}`);
}

/**
 * The choice row with the key hints after it when they fit on its line, else the hints on the
 * rows above it, in place of the blank line (`hintRows`: wrapped, never cut, so every key can
 * be read however narrow the screen). When that takes more than `max` rows in all (a short,
 * narrow screen), the hints run on as one text instead, a hint broken where a row ends: fewer
 * rows, so that the call's facts above stay in sight.
 */
export function withHints(
  rows: string[],
  hints: string[],
  options: { width: number; max?: number },
  t: Theme,
): string[] {
  const { width, max = Number.POSITIVE_INFINITY } = options;
  const hint = hints.join("  ");
  if (rows.length === 1 && fits(hint, width - visibleWidth(rows[0]) - 2)) {
    return ["", `${rows[0]}  ${t.dim(hint)}`];
  }
  const packed = hintRows(hints, width);
  const flowed = wrapStrict(` ${hint}`, Math.max(1, width));
  const shown = packed.length + rows.length > max && flowed.length < packed.length
    ? flowed
    : packed;
  return [...shown.map((row) => t.dim(row)), ...rows];
}

/**
 * `hints` as rows of at most `width` cells, each row starting with a space: as many whole hints
 * a row as fit, two spaces apart; a hint wider than a row wrapped, its later rows indented by
 * four spaces. Measured as no terminal draws wider (`wrapStrict`), as a hint can quote a fact
 * (`[a] allows git push *`).
 */
export function hintRows(hints: readonly string[], width: number): string[] {
  const rows: string[] = [];
  let row = "";
  for (const hint of hints) {
    const next = row === "" ? ` ${hint}` : `${row}  ${hint}`;
    if (fits(next, width)) {
      row = next;
      continue;
    }
    if (row !== "") rows.push(row);
    row = "";
    if (fits(` ${hint}`, width)) {
      row = ` ${hint}`;
      continue;
    }
    const parts = wrapStrict(hint, Math.max(1, width - 4));
    rows.push(` ${parts[0]}`, ...parts.slice(1).map((part) => `    ${part}`));
  }
  if (row !== "") rows.push(row);
  return rows;
}

/** Whether `text` takes one row of `width` cells however a terminal draws its characters. */
function fits(text: string, width: number): boolean {
  return width > 0 && wrapStrict(text, width).length === 1;
}

/** `rows`, at most `max` of them, the last `more` (an ellipsis) when some were cut. */
export function capRows(rows: string[], max: number, more: string): string[] {
  if (max <= 0) return [];
  return rows.length > max ? [...rows.slice(0, max - 1), more] : rows;
}
