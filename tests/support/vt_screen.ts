/**
 * A tiny VT interpreter for tests: enough of a terminal to check what the inline screen leaves
 * on screen and in scrollback. It understands `\r`, `\n`, printable text (cell widths from
 * visibleWidth, auto-wrap with a pending-wrap column), CSI A/B/C/D/G (cursor moves), CSI K
 * (0/1/2), CSI J (0/2), SGR (ignored), ?25h/l (cursor), ?2026h/l (synchronized output) and
 * ?2004h/l (bracketed paste), ?7h/l (auto-wrap; off, text at the right edge overwrites the last
 * column). Any other escape sequence throws, so a renderer emitting something
 * unexpected fails its test. `resize()` re-wraps soft-wrapped lines like modern terminals do.
 */
import stringWidth from "string-width";
import { visibleWidth } from "../../src/tui/width.ts";

interface Row {
  /** One entry per cell; the cell after a wide character is "". */
  cells: string[];
  /** True when text ran past the right edge of this row into the next one (a soft wrap). */
  wrapped: boolean;
}

const segmenter = new Intl.Segmenter();

function blankRow(columns: number): Row {
  return { cells: Array(columns).fill(" "), wrapped: false };
}

function rowText(row: Row): string {
  return row.cells.join("").replace(/ +$/, "");
}

/** A terminal screen with scrollback, driven by `write()`. */
export class VtScreen {
  columns: number;
  rows: number;
  /** Rows scrolled off the top, oldest first. */
  #history: Row[] = [];
  #screen: Row[];
  #row = 0;
  /** Column of the cursor; equal to `columns` when a wrap is pending. */
  #col = 0;
  /** Whether the cursor is shown (?25h / ?25l). */
  cursorVisible = true;
  /** Inside a synchronized update (?2026h seen, ?2026l not yet). */
  synchronized = false;
  bracketedPaste = false;
  /** Auto-wrap mode (?7h / ?7l). */
  autowrap = true;
  /**
   * Whether text is drawn code point by code point, each as wide as string-width says on its
   * own (as tmux and xterm do), instead of grapheme by grapheme.
   */
  #byCodePoint: boolean;
  /** The terminal's replies to cursor position requests (CSI 6n), `CSI row ; col R`, 1-based. */
  replies: string[] = [];

  constructor(columns: number, rows: number, options: { byCodePoint?: boolean } = {}) {
    this.#byCodePoint = options.byCodePoint ?? false;
    this.columns = columns;
    this.rows = rows;
    this.#screen = Array.from({ length: rows }, () => blankRow(columns));
  }

  /** Cursor position on the visible screen (col clamped to the last column). */
  get cursor(): { row: number; col: number } {
    return { row: this.#row, col: Math.min(this.#col, this.columns - 1) };
  }

  /** Rows scrolled into history, right-trimmed. */
  scrollback(): string[] {
    return this.#history.map(rowText);
  }

  /** The visible rows, right-trimmed. */
  visible(): string[] {
    return this.#screen.map(rowText);
  }

  /** History and visible rows, with blank rows at the bottom dropped. */
  text(): string[] {
    const all = [...this.scrollback(), ...this.visible()];
    while (all.length > 0 && all[all.length - 1] === "") all.pop();
    return all;
  }

  /** Interprets `data` as terminal output. */
  write(data: string): void {
    let i = 0;
    while (i < data.length) {
      const ch = data[i];
      if (ch === "\x1b") {
        i = this.#escape(data, i);
      } else if (ch === "\r") {
        this.#col = 0;
        i++;
      } else if (ch === "\n") {
        this.#lineFeed();
        i++;
      } else {
        let end = i;
        while (end < data.length && !"\x1b\r\n".includes(data[end])) end++;
        const text = data.slice(i, end);
        if (this.#byCodePoint) {
          for (const point of text) {
            this.#print(point, stringWidth(point.replace(/\p{Cs}/u, "\ufffd")));
          }
        } else {
          for (const { segment } of segmenter.segment(text)) this.#print(segment);
        }
        i = end;
      }
    }
  }

  /**
   * Changes the size the way a re-wrapping terminal does: soft-wrapped rows are joined into their
   * logical lines and wrapped again at the new width, the cursor keeps its place in its line,
   * blank rows below the cursor are dropped and the bottom rows stay visible.
   */
  resize(columns: number, rows: number): void {
    const all = [...this.#history, ...this.#screen];
    const cursorIndex = this.#history.length + this.#row;
    const reflowed: Row[] = [];
    let newCursor = { row: 0, col: 0 };
    let start = 0;
    while (start < all.length) {
      let end = start;
      while (all[end].wrapped && end + 1 < all.length) end++;
      const cells = all.slice(start, end + 1).flatMap((row) => row.cells);
      let used = cells.length;
      while (used > 0 && cells[used - 1] === " ") used--;
      const hasCursor = cursorIndex >= start && cursorIndex <= end;
      const offset = (cursorIndex - start) * this.columns + Math.min(this.#col, this.columns);
      if (hasCursor) used = Math.max(used, offset);
      const count = Math.max(1, Math.ceil(used / columns));
      for (let k = 0; k < count; k++) {
        const slice = cells.slice(k * columns, Math.min(used, (k + 1) * columns));
        const row = blankRow(columns);
        slice.forEach((cell, c) => (row.cells[c] = cell));
        row.wrapped = k < count - 1;
        reflowed.push(row);
      }
      if (hasCursor) {
        const sub = Math.min(Math.floor(offset / columns), count - 1);
        newCursor = { row: reflowed.length - count + sub, col: offset - sub * columns };
      }
      start = end + 1;
    }
    while (reflowed.length - 1 > newCursor.row && rowText(reflowed[reflowed.length - 1]) === "") {
      reflowed.pop();
    }
    const top = Math.max(0, reflowed.length - rows);
    this.#history = reflowed.slice(0, top);
    this.#screen = reflowed.slice(top);
    while (this.#screen.length < rows) this.#screen.push(blankRow(columns));
    this.columns = columns;
    this.rows = rows;
    this.#row = newCursor.row - top;
    this.#col = Math.min(newCursor.col, columns);
  }

  #print(grapheme: string, width = visibleWidth(grapheme)): void {
    if (width === 0) {
      if (this.#col > 0) this.#screen[this.#row].cells[this.#col - 1] += grapheme;
      return;
    }
    if (this.#col + width > this.columns && !this.autowrap) this.#col = this.columns - width;
    else if (this.#col + width > this.columns) {
      this.#screen[this.#row].wrapped = true;
      this.#col = 0;
      this.#lineFeed();
    }
    const cells = this.#screen[this.#row].cells;
    cells[this.#col] = grapheme;
    if (width === 2) cells[this.#col + 1] = "";
    this.#col += width;
  }

  #lineFeed(): void {
    if (this.#row < this.rows - 1) {
      this.#row++;
      return;
    }
    this.#history.push(this.#screen.shift()!);
    this.#screen.push(blankRow(this.columns));
  }

  /** Interprets the escape sequence starting at `start`; returns the index after it. */
  #escape(data: string, start: number): number {
    const match = data[start + 1] === "["
      ? /^([?>=<]?)([0-9;]*)([$ ]?)([@-~])/.exec(data.slice(start + 2, start + 32))
      : null;
    if (!match) {
      throw new Error(
        `Unsupported escape sequence ${JSON.stringify(data.slice(start, start + 8))}`,
      );
    }
    const [body, prefix, params, intermediate, final] = match;
    const sequence = "\x1b[" + body;
    const n = params === "" ? 0 : Number(params.split(";")[0]);
    const count = Math.max(1, n);
    const col = Math.min(this.#col, this.columns - 1);
    const row = this.#screen[this.#row];
    if (prefix === "?" && intermediate === "" && (final === "h" || final === "l")) {
      const on = final === "h";
      if (n === 25) this.cursorVisible = on;
      else if (n === 7) this.autowrap = on;
      else if (n === 2026) this.synchronized = on;
      else if (n === 2004) this.bracketedPaste = on;
      else throw new Error(`Unsupported escape sequence ${JSON.stringify(sequence)}`);
    } else if (prefix !== "" || intermediate !== "") {
      throw new Error(`Unsupported escape sequence ${JSON.stringify(sequence)}`);
    } else if (final === "n" && n === 6) {
      this.replies.push(`\x1b[${this.#row + 1};${col + 1}R`);
    } else if (final === "m") {
      // Styles take no cells.
    } else if (final === "A") {
      this.#row = Math.max(0, this.#row - count);
      this.#col = col;
    } else if (final === "B") {
      this.#row = Math.min(this.rows - 1, this.#row + count);
      this.#col = col;
    } else if (final === "C") {
      this.#col = Math.min(this.columns - 1, col + count);
    } else if (final === "D") {
      this.#col = Math.max(0, col - count);
    } else if (final === "G") {
      this.#col = Math.min(this.columns - 1, count - 1);
    } else if (final === "K") {
      const [from, to] = n === 0 ? [col, this.columns] : n === 1 ? [0, col + 1] : [0, this.columns];
      for (let c = from; c < to; c++) row.cells[c] = " ";
      if (n !== 1) row.wrapped = false;
    } else if (final === "J") {
      const first = n === 2 ? 0 : this.#row + 1;
      if (n === 0) {
        for (let c = col; c < this.columns; c++) row.cells[c] = " ";
        row.wrapped = false;
      } else if (n !== 2) {
        throw new Error(`Unsupported escape sequence ${JSON.stringify(sequence)}`);
      }
      for (let r = first; r < this.rows; r++) this.#screen[r] = blankRow(this.columns);
    } else {
      throw new Error(`Unsupported escape sequence ${JSON.stringify(sequence)}`);
    }
    return start + sequence.length;
  }
}
