/**
 * The newest committed blocks, kept so that the blocks still on the visible screen can be drawn
 * again at a new width after a resize (see `Screen.position`). A block keeps its source (a
 * function that renders it at a width) and only the cell widths of the lines it was last drawn
 * with: enough to count the rows it takes now. A block committed without a renderer (a command's
 * output, a help page) keeps its lines and is drawn again as it was.
 *
 * Bounded by rows, not blocks: the kept blocks cover at least `MAX_ROWS` rows as last drawn
 * (more than any screen is tall); older blocks are dropped, they are in the scrollback for good.
 */
import { visibleWidth } from "./width.ts";

/** Rows of committed output kept for a redraw. */
const MAX_ROWS = 400;

/** Renders a block at a width, in cells; the lines are at most that wide. */
export type BlockRenderer = (columns: number) => string[];

interface TailBlock {
  render?: BlockRenderer;
  /** The lines as drawn, kept only for a block without a renderer. */
  lines?: string[];
  /** Cell width of each line as last drawn. */
  widths: number[];
  /** Rows the block took when it was last drawn (at the width of then). */
  written: number;
}

/** The newest committed blocks of the session, in order. */
export class CommittedTail {
  #blocks: TailBlock[] = [];
  #written = 0;

  /** Records `lines`, just written at `columns`; `render` draws them again at another width. */
  add(lines: string[], columns: number, render?: BlockRenderer): void {
    const block = drawn(lines, columns, render);
    this.#blocks.push(block);
    this.#written += block.written;
    while (this.#blocks.length > 1 && this.#written - this.#blocks[0].written >= MAX_ROWS) {
      this.#written -= this.#blocks.shift()!.written;
    }
  }

  /** Forgets every block (the screen was emptied: they are all in the scrollback now). */
  clear(): void {
    this.#blocks = [];
    this.#written = 0;
  }

  /**
   * Rows each kept block takes on screen now, oldest first. A terminal that re-wraps on resize
   * (`reflow`) has re-flowed every line to `columns`; one that does not kept the rows as written.
   */
  rows(columns: number, reflow: boolean): number[] {
    return this.#blocks.map((block) =>
      reflow ? block.widths.reduce((sum, width) => sum + rowsOf(width, columns), 0) : block.written
    );
  }

  /**
   * Draws the blocks from index `from` on again at `columns`, records them as drawn so, and
   * returns their lines.
   */
  redraw(from: number, columns: number): string[] {
    const out: string[] = [];
    for (let i = from; i < this.#blocks.length; i++) {
      const old = this.#blocks[i];
      const lines = old.render ? old.render(columns) : old.lines!;
      const block = drawn(lines, columns, old.render);
      this.#written += block.written - old.written;
      this.#blocks[i] = block;
      out.push(...lines);
    }
    return out;
  }
}

/** Rows a line `width` cells wide takes on a terminal `columns` wide (a blank line takes one). */
export function rowsOf(width: number, columns: number): number {
  return Math.max(1, Math.ceil(width / Math.max(1, columns)));
}

function drawn(lines: string[], columns: number, render?: BlockRenderer): TailBlock {
  const widths = lines.map(visibleWidth);
  const written = widths.reduce((sum, width) => sum + rowsOf(width, columns), 0);
  return render ? { render, widths, written } : { lines, widths, written };
}
