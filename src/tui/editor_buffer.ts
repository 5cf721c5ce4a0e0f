/**
 * The editor's text and cursor: logical lines, a cursor as (line, UTF-16 offset) and the edits
 * and moves that keep the cursor on a grapheme boundary. Knows nothing about keys.
 */
import { offsetAtCells, rowOf, snap, type Span, textWidth, wrapLine } from "./editor_text.ts";

/** Multi-line text with a cursor. */
export class TextBuffer {
  #lines = [""];
  #row = 0;
  #col = 0;

  /** The lines (never empty; one empty line when there is no text). */
  get lines(): readonly string[] {
    return this.#lines;
  }

  /** Line index of the cursor. */
  get row(): number {
    return this.#row;
  }

  /** UTF-16 offset of the cursor in its line. */
  get col(): number {
    return this.#col;
  }

  /** The cursor's line. */
  get line(): string {
    return this.#lines[this.#row];
  }

  get text(): string {
    return this.#lines.join("\n");
  }

  /** Replaces the text (newlines split lines) and puts the cursor at its end. */
  set text(value: string) {
    this.#lines = value.split("\n");
    this.#row = this.#lines.length - 1;
    this.#col = this.line.length;
  }

  /** Puts the cursor at (`row`, `col`), clamped to the text. */
  place(row: number, col: number): void {
    this.#row = Math.max(0, Math.min(row, this.#lines.length - 1));
    this.#col = Math.max(0, Math.min(col, this.line.length));
  }

  /** Replaces `[start, end)` of line `row` with `value` and puts the cursor after it. */
  replace(row: number, start: number, end: number, value: string): void {
    const line = this.#lines[row];
    this.#lines[row] = line.slice(0, start) + value + line.slice(end);
    this.place(row, start + value.length);
  }

  /** Inserts `value` (which may hold newlines) at the cursor. */
  insert(value: string): void {
    const line = this.line;
    const pieces = (line.slice(0, this.#col) + value).split("\n");
    const after = line.slice(this.#col);
    const last = pieces.length - 1;
    this.#col = pieces[last].length;
    pieces[last] += after;
    this.#lines.splice(this.#row, 1, ...pieces);
    this.#row += last;
  }

  /** Deletes from `target` to the cursor; at a line start (or `target` -1) joins the previous line. */
  deleteBack(target: number): void {
    if (this.#col === 0 || target === -1) {
      if (this.#row === 0) return;
      const previous = this.#lines[this.#row - 1];
      this.#lines.splice(this.#row - 1, 2, previous + this.line.slice(this.#col));
      this.#row--;
      this.#col = previous.length;
      return;
    }
    this.replace(this.#row, target, this.#col, "");
  }

  /** Deletes from the cursor to `target`; at a line end (or `target` -1) joins the next line. */
  deleteForward(target: number): void {
    const line = this.line;
    if (target === -1 || this.#col === line.length) {
      if (this.#row === this.#lines.length - 1) return;
      this.#lines.splice(this.#row, 2, line + this.#lines[this.#row + 1]);
      return;
    }
    this.#lines[this.#row] = line.slice(0, this.#col) + line.slice(target);
  }

  /**
   * Moves to `offset` in the cursor's line; moving left (`step` -1) from a line start or right
   * (`step` 1) from a line end goes to the neighbouring line instead.
   */
  moveTo(offset: number, step: -1 | 0 | 1): void {
    if (step < 0 && this.#col === 0 && this.#row > 0) {
      this.place(this.#row - 1, Infinity);
    } else if (step > 0 && this.#col === this.line.length && this.#row < this.#lines.length - 1) {
      this.place(this.#row + 1, 0);
    } else {
      this.#col = offset;
    }
  }

  /** Cells from the start of the cursor's visual row (rows `content` cells wide) to the cursor. */
  column(content: number): number {
    const rows = wrapLine(this.line, content);
    return textWidth(this.line.slice(rows[rowOf(rows, this.#col)].start, this.#col));
  }

  /**
   * Moves one visual row up (`step` -1) or down (1) to the column nearest `goal` cells, rows
   * being `content` cells wide, never into an atom. False (and no move) past the first or last
   * row.
   */
  moveVertical(
    step: -1 | 1,
    content: number,
    goal: number,
    atoms: (line: string) => Span[],
  ): boolean {
    const rows = wrapLine(this.line, content);
    let line = this.#row;
    let targetRows = rows;
    let target = rowOf(rows, this.#col) + step;
    if (target < 0 || target >= rows.length) {
      line += step;
      if (line < 0 || line >= this.#lines.length) return false;
      targetRows = wrapLine(this.#lines[line], content);
      target = step < 0 ? targetRows.length - 1 : 0;
    }
    const text = this.#lines[line];
    const last = target === targetRows.length - 1;
    this.#row = line;
    this.#col = snap(offsetAtCells(text, targetRows[target], goal, last), atoms(text), "start");
    return true;
  }
}
