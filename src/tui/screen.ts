/**
 * Inline rendering: finished transcript lines go once into the terminal's own scrollback, and a
 * bounded live region below them (streaming text, running tools, the editor, the status line)
 * is redrawn on every frame by rewriting only the rows that changed.
 *
 * All cursor movement is relative (up, down, carriage return): in inline mode the row where the
 * live region starts on screen is unknown, so the screen only ever tracks the cursor's row
 * within the live region. Every frame and every commit is a single `write`, wrapped in
 * synchronized-output markers (CSI ?2026) when enabled, so a terminal never shows half a frame.
 *
 * Relative moves count on every live row taking exactly one screen row. Widths are measured so
 * that no row is wider than counted (width.ts), and as a second net the live region is drawn
 * with auto-wrap off (CSI ?7l, turned on again at the end of every write and for committed
 * lines): a row a terminal draws wider than counted is cut at the edge instead of wrapping, so
 * the next frame can never be drawn one row off, over a row of the permission dialog.
 *
 * After a resize, the committed blocks still on the visible screen (not scrollback yet) are drawn
 * again at the new width from their source (`askPosition`, `position`); the scrollback is not.
 */
import { type BlockRenderer, CommittedTail } from "./screen_tail.ts";
import { truncateToWidth, visibleWidth, widthEpoch } from "./width.ts";

/** Where output goes; one call per frame. */
export interface ScreenOutput {
  write(text: string): void;
}

/** Terminal size in cells. */
export interface ScreenSize {
  columns: number;
  rows: number;
}

/** A cursor position inside the live region: `row` indexes the lines given, `col` is in cells. */
export interface ScreenCursor {
  row: number;
  col: number;
}

const CSI = "\x1b[";
const HIDE_CURSOR = `${CSI}?25l`;
const SHOW_CURSOR = `${CSI}?25h`;
const CLEAR_LINE = `${CSI}2K`;
const CLEAR_BELOW = `${CSI}J`;
const SYNC_BEGIN = `${CSI}?2026h`;
const SYNC_END = `${CSI}?2026l`;
/** Auto-wrap (DECAWM) off and on: the live region is drawn without it. */
const WRAP_OFF = `${CSI}?7l`;
const WRAP_ON = `${CSI}?7h`;
/** Device status report: the terminal answers with the cursor position, `CSI row ; col R`. */
const ASK_POSITION = `${CSI}6n`;

/**
 * The inline screen. The live region always occupies at least one physical row (the row the
 * cursor sits on); an empty frame is that row left blank.
 */
export class Screen {
  #out: ScreenOutput;
  #columns: number;
  #rows: number;
  #synchronized: boolean;
  /** Lines and cursor as last given to `render` (before cutting), kept for `resize`. */
  #source: string[] = [];
  #sourceCursor: ScreenCursor | undefined;
  /** Physical rows of the live region as they are on screen now (at least one). */
  #frame: string[] = [""];
  /** Cursor position shown, within `#frame`; undefined when the cursor is hidden. */
  #shown: ScreenCursor | undefined;
  /** Row of the terminal cursor within the live region, always inside `#frame`. */
  #row = 0;
  /** Column of the terminal cursor, in cells (only kept exactly when parked or shown). */
  #col = 0;
  /** Whether the terminal cursor is visible right now (unknown at start: assume visible). */
  #cursorVisible = true;
  /** Each line of the last layout, cut to `#columns` (measuring width is the costly part). */
  #cut = new Map<string, string>();
  /** The `widthEpoch()` the lines in `#cut` were measured in. */
  #cutEpoch = widthEpoch();
  /** The newest committed blocks, for the redraw after a resize. */
  #tail = new CommittedTail();
  /** Whether the terminal re-wraps its lines on resize (see `resize`). */
  #reflow: boolean;
  /** Counts writes that may move the live region on screen (commits, growth, resizes). */
  #moves = 0;
  /** The position request waiting for its reply: the live row and `#moves` when it was sent. */
  #asked: { row: number; moves: number } | undefined;

  /**
   * `options.synchronized` (default false) wraps every write in CSI ?2026h … CSI ?2026l.
   * `options.reflow` (default true): the terminal re-wraps lines to a new width, as all current
   * ones do but xterm and the Linux console.
   */
  constructor(
    out: ScreenOutput,
    size: ScreenSize,
    options: { synchronized?: boolean; reflow?: boolean } = {},
  ) {
    this.#out = out;
    this.#columns = Math.max(1, size.columns);
    this.#rows = Math.max(2, size.rows);
    this.#synchronized = options.synchronized ?? false;
    this.#reflow = options.reflow ?? true;
  }

  /** Turns synchronized-output wrapping on or off for the following writes. */
  setSynchronized(on: boolean): void {
    this.#synchronized = on;
  }

  /** Lines currently shown in the live region, after cutting and bounding (a copy). */
  get frame(): string[] {
    return this.#source.length === 0 ? [] : [...this.#frame];
  }

  /**
   * Writes `lines` into the scrollback above the live region, then draws the live region below
   * them, in one write: `next` (the new live lines and cursor, as `render` takes them) when
   * given, else the previous frame again. Giving `next` means no stale frame is ever shown: a
   * finished call is never drawn both committed and live. Once in the scrollback, committed
   * lines are never touched again (see `position` for those still on the visible screen); a
   * line wider than the terminal is left for the terminal to wrap. `blocks`, when given, are
   * the lines' blocks in order, each drawing itself at any width from its source.
   */
  commit(
    lines: string[],
    next?: { lines: string[]; cursor?: ScreenCursor },
    blocks?: BlockRenderer[],
  ): void {
    if (lines.length === 0) {
      if (next) this.render(next.lines, next.cursor);
      return;
    }
    this.#tail.add(lines, this.#columns, blocks);
    this.#moves++;
    let text = this.#beginFrame() + this.#clearRows() + WRAP_ON;
    for (const line of lines) text += line + "\r\n";
    text += WRAP_OFF;
    this.#row = 0;
    if (next) {
      this.#source = [...next.lines];
      this.#sourceCursor = next.cursor ? { ...next.cursor } : undefined;
      const { frame, shown } = this.#layout(next.lines, next.cursor);
      this.#frame = frame;
      this.#shown = shown;
    }
    text += this.#drawAll(this.#frame);
    text += this.#placeCursor(this.#shown);
    this.#emit(text);
  }

  /**
   * Sets the live region to `lines` (the last `rows - 1` of them when there are more; each cut to
   * the terminal width) and puts the cursor at `cursor`, or hides it. Only rows that differ from
   * the previous frame are rewritten; nothing is written when nothing changed.
   */
  render(lines: string[], cursor?: ScreenCursor): void {
    this.#source = [...lines];
    this.#sourceCursor = cursor ? { ...cursor } : undefined;
    const { frame, shown } = this.#layout(lines, cursor);
    const previous = this.#frame;
    const same = frame.length === previous.length && frame.every((line, i) => line === previous[i]);
    if (same && sameCursor(shown, this.#shown)) return;

    let text = this.#beginFrame();
    const common = Math.min(frame.length, previous.length);
    for (let i = 0; i < common; i++) {
      if (frame[i] === previous[i]) continue;
      text += this.#moveTo(i) + "\r" + CLEAR_LINE + frame[i];
    }
    if (frame.length > previous.length) {
      // Growing at the screen's bottom row scrolls: the live region moves up.
      this.#moves++;
      text += this.#moveTo(previous.length - 1);
      for (let i = previous.length; i < frame.length; i++) text += "\r\n" + frame[i];
      this.#row = frame.length - 1;
    } else if (frame.length < previous.length) {
      text += this.#moveTo(frame.length) + "\r" + CLEAR_BELOW + this.#moveTo(frame.length - 1);
    }
    this.#frame = frame;
    this.#shown = shown;
    text += this.#placeCursor(shown);
    this.#emit(text);
  }

  /**
   * Adapts to a new terminal size (after SIGWINCH). The terminal may have re-wrapped the live
   * rows to the new width, so the cursor moves up over as many rows as the previous frame takes
   * at the new width, clears from there down, and redraws the live region at the new size.
   * Committed scrollback is never touched on terminals that re-wrap (kitty, iTerm2, WezTerm,
   * VTE, Windows Terminal, tmux); on one that does not (xterm), narrowing over-counts and can
   * erase a few committed rows just above the live region from the visible screen.
   */
  resize(size: ScreenSize): void {
    const columns = Math.max(1, size.columns);
    const rows = Math.max(2, size.rows);
    let up = 0;
    for (let i = 0; i < Math.min(this.#row, this.#frame.length); i++) {
      up += rowsAt(this.#frame[i], columns);
    }
    if (this.#row < this.#frame.length) {
      const wrapped = rowsAt(this.#frame[this.#row], columns);
      up += Math.min(Math.floor(this.#col / columns), wrapped - 1);
    }
    up = Math.min(up, rows - 1);
    this.#moves++;
    this.#columns = columns;
    this.#rows = rows;
    this.#cut.clear();

    let text = this.#beginFrame();
    text += (up > 0 ? `${CSI}${up}A` : "") + "\r" + CLEAR_BELOW;
    this.#row = 0;
    const { frame, shown } = this.#layout(this.#source, this.#sourceCursor);
    this.#frame = frame;
    this.#shown = shown;
    text += this.#drawAll(frame) + this.#placeCursor(shown);
    this.#emit(text);
  }

  /**
   * Asks the terminal where the cursor is (CSI 6n); its reply (`CSI row ; col R`) goes to
   * `position`. Sent once a resize has settled, for the redraw of the visible committed blocks.
   */
  askPosition(): void {
    this.#asked = { row: this.#row, moves: this.#moves };
    this.#out.write(ASK_POSITION);
  }

  /**
   * The reply to `askPosition`: the cursor was on screen row `row` (1 is the top). Draws the
   * committed blocks still on the visible screen again at the current width, so that text the
   * terminal re-wrapped mid-word on a resize reads right again. Returns false when the reply
   * came too late to use (something moved the live region since it was asked: ask again).
   *
   * The scrollback is never rewritten, and nothing above the session's first row is touched:
   * - the reply gives the live region's top row on screen; the rows above it that are the
   *   session's are the kept blocks' rows at the new width (as the terminal re-flowed them, or
   *   as written on one that does not re-flow), and never more than the rows above the top;
   * - the blocks that cover those rows are drawn again from their source (the first one whole,
   *   even where its start is above the screen: its new start then scrolls into the scrollback
   *   after the old one, a repeat rather than a gap), the live region after them, in one write;
   * - the rows are blanked one by one, never with an erase from the top row (CSI J there makes
   *   tmux copy the screen into its history; CSI 2J pushes it there on some terminals; CSI 3J
   *   erases the scrollback).
   * Blocks already in the scrollback stay as the terminal left them; Ctrl-L and /redraw replay
   * the whole transcript.
   */
  position(row: number): boolean {
    const asked = this.#asked;
    this.#asked = undefined;
    if (!asked) return true;
    if (asked.moves !== this.#moves) return false;
    const top = row - 1 - asked.row;
    if (top <= 0 || top >= this.#rows) return true;
    const heights = this.#tail.rows(this.#columns, this.#reflow);
    const above = Math.min(top, heights.reduce((sum, rows) => sum + rows, 0));
    if (above === 0) return true;
    let from = heights.length;
    for (let covered = 0; covered < above;) covered += heights[--from];
    let lines = this.#tail.redraw(from, this.#columns);
    // At most a screen's height of repeat above the visible rows.
    let rows = lines.reduce((sum, line) => sum + rowsAt(line, this.#columns), 0);
    let cut = 0;
    while (rows > above + this.#rows && cut < lines.length) {
      rows -= rowsAt(lines[cut++], this.#columns);
    }
    lines = lines.slice(cut);

    const span = above + this.#frame.length;
    let text = this.#beginFrame() + this.#moveTo(0) + `${CSI}${above}A`;
    for (let i = 0; i < span; i++) text += (i > 0 ? `${CSI}1B` : "") + "\r" + CLEAR_LINE;
    if (span > 1) text += `${CSI}${span - 1}A`;
    text += WRAP_ON;
    for (const line of lines) text += line + "\r\n";
    text += WRAP_OFF;
    this.#row = 0;
    this.#moves++;
    text += this.#drawAll(this.#frame) + this.#placeCursor(this.#shown);
    this.#emit(text);
    return true;
  }

  /**
   * Empties the visible screen and puts the live region at its top, for a redraw from the
   * session (Ctrl-L, /redraw). Nothing is erased: from the bottom row, one line feed per row
   * scrolls everything on screen into the scrollback, so what the person had above the session
   * (and the old transcript) stays there. The caller commits the transcript again and renders;
   * until then the live region is one blank row.
   */
  clear(): void {
    this.#tail.clear();
    this.#moves++;
    let text = this.#beginFrame() + this.#clearRows() + `${CSI}999B` +
      "\n".repeat(this.#rows) + `${CSI}H`;
    this.#row = 0;
    this.#col = 0;
    this.#frame = [""];
    this.#shown = undefined;
    text += "\r";
    this.#emit(text);
  }

  /**
   * Ends inline rendering: clears the live region (the caller commits whatever should stay),
   * leaves the cursor at the start of the fresh line below the committed output and shows it,
   * so the shell prompt comes back cleanly. The screen can render again afterwards.
   */
  finish(): void {
    this.#moves++;
    this.#asked = undefined;
    let text = this.#beginFrame();
    text += this.#moveTo(0) + "\r" + CLEAR_BELOW + SHOW_CURSOR;
    this.#cursorVisible = true;
    this.#source = [];
    this.#sourceCursor = undefined;
    this.#frame = [""];
    this.#shown = undefined;
    this.#col = 0;
    this.#emit(text);
  }

  /** The frame to show for `lines`: bounded to `rows - 1`, cut to the width, at least one row. */
  #layout(lines: string[], cursor: ScreenCursor | undefined) {
    const dropped = Math.max(0, lines.length - (this.#rows - 1));
    if (this.#cutEpoch !== widthEpoch()) {
      this.#cut.clear();
      this.#cutEpoch = widthEpoch();
    }
    const cut = new Map<string, string>();
    const kept = lines.slice(dropped).map((line) => {
      const done = this.#cut.get(line) ?? truncateToWidth(line, this.#columns);
      cut.set(line, done);
      return done;
    });
    this.#cut = cut;
    const frame = kept.length === 0 ? [""] : kept;
    let shown: ScreenCursor | undefined;
    if (cursor && cursor.row >= dropped) {
      shown = {
        row: Math.min(cursor.row - dropped, frame.length - 1),
        col: Math.max(0, Math.min(cursor.col, this.#columns - 1)),
      };
    }
    return { frame, shown };
  }

  /** Hides the cursor while drawing, so it never flickers across the rows being rewritten. */
  #beginFrame(): string {
    if (!this.#cursorVisible) return "";
    this.#cursorVisible = false;
    return HIDE_CURSOR;
  }

  /**
   * Blanks the live region's rows one by one and returns to its top row. Not one clear-below
   * from the top: when the live region starts on the screen's first row, tmux (scroll-on-clear,
   * on by default) would copy the whole screen into its history, live rows included.
   */
  #clearRows(): string {
    let text = this.#moveTo(0);
    for (let i = 0; i < this.#frame.length; i++) {
      text += (i > 0 ? `${CSI}1B` : "") + "\r" + CLEAR_LINE;
    }
    if (this.#frame.length > 1) text += `${CSI}${this.#frame.length - 1}A`;
    this.#row = 0;
    return text;
  }

  /** Writes `frame` from the current row (which must be blank), ending on its last row. */
  #drawAll(frame: string[]): string {
    this.#row = frame.length - 1;
    return frame.join("\r\n");
  }

  /** Relative vertical move to `row` of the live region (the column is left as it is). */
  #moveTo(row: number): string {
    const delta = row - this.#row;
    this.#row = row;
    if (delta < 0) return `${CSI}${-delta}A`;
    if (delta > 0) return `${CSI}${delta}B`;
    return "";
  }

  /** Moves to `cursor` and shows it, or parks the hidden cursor at column 0 of its row. */
  #placeCursor(cursor: ScreenCursor | undefined): string {
    if (!cursor) {
      this.#col = 0;
      return "\r";
    }
    this.#col = cursor.col;
    this.#cursorVisible = true;
    const right = cursor.col > 0 ? `${CSI}${cursor.col}C` : "";
    return this.#moveTo(cursor.row) + "\r" + right + SHOW_CURSOR;
  }

  /** Writes `text` with auto-wrap off, turned on again at its end (so any exit leaves it on). */
  #emit(text: string): void {
    const framed = WRAP_OFF + text + WRAP_ON;
    this.#out.write(this.#synchronized ? SYNC_BEGIN + framed + SYNC_END : framed);
  }
}

/** Physical rows `line` takes on a terminal `columns` wide (a blank line still takes one). */
function rowsAt(line: string, columns: number): number {
  return Math.max(1, Math.ceil(visibleWidth(line) / columns));
}

function sameCursor(a: ScreenCursor | undefined, b: ScreenCursor | undefined): boolean {
  if (!a || !b) return a === b;
  return a.row === b.row && a.col === b.col;
}
