/**
 * Cell arithmetic that needs no Unicode tables, for the first frame: the width libraries start
 * ICU and build large Unicode regexes at import (tens of milliseconds), so width.ts loads them
 * after the prompt is on screen and uses these until then.
 *
 * The one rule: never less than the real width. Printable ASCII is one cell, ASCII controls
 * none (as the libraries count them), a code point in a short list of ranges that are one cell
 * wide on their own (Latin, Greek, Cyrillic, punctuation, arrows, box drawing, the UI's marks)
 * one, and any other code point two: a grapheme is at most two cells per code point it holds,
 * so CJK is exact and emoji sequences, combining marks and the like are over-counted. CSI
 * sequences (colours) count zero. An over-count only wraps or cuts a line early.
 */

/** CSI sequences, exactly as the width libraries' `ansi-regex` reads them. */
// deno-lint-ignore no-control-regex
const CSI = /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]/y;

/** Ranges of code points one cell wide on their own (checked against the libraries in tests). */
const NARROW: ReadonlyArray<readonly [number, number]> = [
  [0x00a0, 0x052f], // Latin-1, Latin Extended, IPA, combining marks, Greek, Cyrillic
  [0x1e00, 0x1fff], // Latin Extended Additional, Greek Extended
  [0x2010, 0x205e], // punctuation: dashes, quotes, bullets, ellipsis, ‹ ›
  [0x2070, 0x20cf], // super- and subscripts, currency signs
  [0x2100, 0x214f], // letterlike symbols (™)
  [0x2190, 0x22ff], // arrows, mathematical operators
  [0x2300, 0x2319], // technical symbols, before the wide watch and hourglass
  [0x232b, 0x23e8], // technical symbols (⏎), before the wide media controls
  [0x2500, 0x25fc], // box drawing, blocks, geometric shapes, before the wide squares
  [0x2713, 0x2718], // check marks and crosses
  [0x2729, 0x274b], // stars and asterisks (✻)
  [0x2800, 0x28ff], // braille (spinners)
];

/** Cells one code point counts for: an upper bound of what it adds to any grapheme. */
export function codePointCells(code: number): number {
  if (code < 0x80) return code >= 0x20 && code < 0x7f ? 1 : 0;
  if (code > 0x28ff) return 2;
  for (const [low, high] of NARROW) {
    if (code < low) return 2;
    if (code <= high) return 1;
  }
  return 2;
}

/** A piece of styled text: a CSI sequence (no cells) or a run of code points drawn together. */
interface Piece {
  text: string;
  cells: number;
  escape: boolean;
}

/**
 * Code points that never start a grapheme of their own (combining marks, joiners, variation
 * selectors, emoji modifiers, tags): kept with the one before, so a wrap or cut rarely splits
 * a character. Only the look depends on this list; the widths do not.
 */
function joinsPrevious(code: number): boolean {
  return (code >= 0x0300 && code <= 0x036f) || (code >= 0x1ab0 && code <= 0x1aff) ||
    (code >= 0x1dc0 && code <= 0x1dff) || (code >= 0x20d0 && code <= 0x20ff) ||
    (code >= 0xfe00 && code <= 0xfe0f) || (code >= 0xfe20 && code <= 0xfe2f) ||
    code === 0x200d || (code >= 0x1f3fb && code <= 0x1f3ff) ||
    (code >= 0xe0020 && code <= 0xe007f);
}

/**
 * `text` as pieces, in order. `strict`: every code point outside ASCII counts two cells, as a
 * terminal that draws East Asian "ambiguous" characters wide draws the narrow ranges above.
 */
function pieces(text: string, strict = false): Piece[] {
  const out: Piece[] = [];
  let i = 0;
  let afterJoiner = false;
  while (i < text.length) {
    CSI.lastIndex = i;
    const escape = CSI.exec(text);
    if (escape) {
      out.push({ text: escape[0], cells: 0, escape: true });
      i += escape[0].length;
      afterJoiner = false;
      continue;
    }
    const code = text.codePointAt(i)!;
    const char = String.fromCodePoint(code);
    const cells = strict && code >= 0x80 ? 2 : codePointCells(code);
    const last = out.at(-1);
    if (last && !last.escape && (afterJoiner || joinsPrevious(code))) {
      last.text += char;
      last.cells += cells;
    } else {
      out.push({ text: char, cells, escape: false });
    }
    afterJoiner = code === 0x200d;
    i += char.length;
  }
  return out;
}

/** Cells `text` takes at most. */
export function fallbackWidth(text: string): number {
  let cells = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === 0x1b) {
      CSI.lastIndex = i;
      const escape = CSI.exec(text);
      if (escape) {
        i += escape[0].length;
        continue;
      }
    }
    const point = text.codePointAt(i)!;
    cells += codePointCells(point);
    i += point > 0xffff ? 2 : 1;
  }
  return cells;
}

/**
 * The first `width` cells of `line` (by the upper bound), escape sequences kept, and whether
 * anything visible was left out.
 */
export function fallbackSlice(line: string, width: number): { text: string; cut: boolean } {
  let text = "";
  let used = 0;
  for (const piece of pieces(line)) {
    if (!piece.escape && used + piece.cells > width) return { text, cut: true };
    text += piece.text;
    used += piece.cells;
  }
  return { text, cut: false };
}

/**
 * `text` wrapped to rows of at most `width` cells (by the upper bound): with `wordWrap`, after
 * the last space that fits or inside a longer word, else wherever the row is full. `trim` drops
 * the spaces at the row ends. A row ends with a reset when a style is open and the next row
 * opens it again, so each row stands alone.
 */
export function fallbackWrap(
  text: string,
  width: number,
  options: { trim: boolean; wordWrap: boolean; strict?: boolean },
): string[] {
  const cells = Math.max(1, width);
  return text.split("\n").flatMap((line) => wrapLine(line, cells, options));
}

function wrapLine(
  line: string,
  width: number,
  { trim, wordWrap, strict }: { trim: boolean; wordWrap: boolean; strict?: boolean },
): string[] {
  const rows: Piece[][] = [];
  let row: Piece[] = [];
  let used = 0;
  for (const piece of pieces(line, strict).flatMap((p) => p.cells > width ? split(p, strict) : p)) {
    if (piece.escape) {
      row.push(piece);
      continue;
    }
    if (used + piece.cells > width && used > 0) {
      // The space at a break is the break. A word under way moves to the next row when it
      // fits there; a longer one breaks here.
      const space = piece.text === " " || !wordWrap ? -1 : row.findLastIndex((p) => p.text === " ");
      let carried = space >= 0 ? row.slice(space + 1) : [];
      let carriedCells = carried.reduce((sum, p) => sum + p.cells, 0);
      if (carriedCells + piece.cells > width) {
        carried = [];
        carriedCells = 0;
      }
      rows.push(row.slice(0, row.length - carried.length));
      row = carried;
      used = carriedCells;
      if (piece.text === " " && wordWrap) continue;
    }
    row.push(piece);
    used += piece.cells;
  }
  rows.push(row);
  return withStyles(rows.map((r) => trim ? trimRow(r) : r));
}

/**
 * A piece wider than the row (a run of characters joined by ZWJ, a letter with many combining
 * marks) as its code points, so that it can break: a row never holds more cells than asked.
 */
function split(piece: Piece, strict?: boolean): Piece[] {
  return Array.from(piece.text, (char) => {
    const code = char.codePointAt(0)!;
    return { text: char, cells: strict && code >= 0x80 ? 2 : codePointCells(code), escape: false };
  });
}

/** `row` without spaces at either end (escape sequences kept). */
function trimRow(row: Piece[]): Piece[] {
  const visible = row.map((p, i) => p.escape || p.text === " " ? -1 : i).filter((i) => i >= 0);
  if (visible.length === 0) return row.filter((p) => p.escape);
  const first = visible[0];
  const last = visible.at(-1)!;
  return row.filter((p, i) => p.escape || (i >= first && i <= last));
}

/** Rows as text, each opening the styles still open from before and closing its own. */
function withStyles(rows: Piece[][]): string[] {
  const open = new Map<string, string>();
  return rows.map((row) => {
    let text = [...open.values()].join("");
    for (const piece of row) {
      text += piece.text;
      if (piece.escape && piece.text.endsWith("m")) applySgr(open, piece.text);
    }
    return open.size > 0 ? text + "\x1b[0m" : text;
  });
}

/** What closes each SGR attribute: the open ones are kept under their closing code. */
const CLOSED_BY: Record<number, number> = {
  1: 22,
  2: 22,
  3: 23,
  4: 24,
  5: 25,
  7: 27,
  8: 28,
  9: 29,
};

const CLOSING = new Set([22, 23, 24, 25, 27, 28, 29, 39, 49]);

/** `open` after the SGR sequence `sgr`: attributes set, closed, or all reset. */
function applySgr(open: Map<string, string>, sgr: string): void {
  const codes = sgr.slice(2, -1).split(";").map((part) => Number(part || "0"));
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i];
    if (code === 0) open.clear();
    else if (CLOSING.has(code)) open.delete(String(code)); // 22 ends both bold and dim
    else if (CLOSED_BY[code] !== undefined) {
      const key = String(CLOSED_BY[code]);
      open.set(key, (open.get(key) ?? "") + `\x1b[${code}m`);
    } else if ((code >= 30 && code <= 38) || (code >= 90 && code <= 97)) {
      const extra = code === 38 ? extendedColour(codes, i) : 0;
      open.set("39", `\x1b[${codes.slice(i, i + 1 + extra).join(";")}m`);
      i += extra;
    } else if ((code >= 40 && code <= 48) || (code >= 100 && code <= 107)) {
      const extra = code === 48 ? extendedColour(codes, i) : 0;
      open.set("49", `\x1b[${codes.slice(i, i + 1 + extra).join(";")}m`);
      i += extra;
    } else {
      // Unknown: kept open until a reset, so the row still ends with one.
      open.set(`other ${code}`, `\x1b[${code}m`);
    }
  }
}

/** Parameters after a 38 or 48 at `i`: `5;n` or `2;r;g;b`. */
function extendedColour(codes: number[], i: number): number {
  return codes[i + 1] === 5 ? 2 : codes[i + 1] === 2 ? 4 : 0;
}
