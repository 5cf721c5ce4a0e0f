/**
 * The newest committed blocks, kept so that the blocks still on the visible screen can be drawn
 * again at a new width after a resize (see `Screen.position`). A block keeps its source (a
 * function that renders it at a width) and only the cell widths of the lines it was last drawn
 * with: enough to count the rows it takes now. A block committed without a renderer (a command's
 * output, a help page) keeps its lines and is drawn again as it was.
 *
 * Bounded: at most `MAX_BLOCKS` blocks, and no more than cover `MAX_ROWS` rows as last drawn
 * (more than a screen is tall); older blocks are dropped, in the scrollback for good.
 */
import { visibleWidth } from "./width.ts";

/** Rows of committed output kept for a redraw (more than a screen has). */
const MAX_ROWS = 300;
/** Blocks kept at most (each holds its source: a tool's result, a message). */
const MAX_BLOCKS = 200;

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

  /**
   * Records `lines`, just written at `columns`. `blocks` are their blocks in order, each drawing
   * itself at any width; when they do not give `lines` at `columns`, the lines are kept as one
   * block drawn by all of them.
   */
  add(lines: string[], columns: number, blocks?: BlockRenderer[]): void {
    const counts = blocks?.map((render) => render(columns).length) ?? [];
    if (blocks && counts.reduce((sum, n) => sum + n, 0) === lines.length) {
      let at = 0;
      blocks.forEach((render, i) => {
        if (counts[i] > 0) this.#push(drawn(lines.slice(at, at + counts[i]), columns, render));
        at += counts[i];
      });
    } else {
      const render = blocks && ((c: number) => blocks.flatMap((block) => block(c)));
      this.#push(drawn(lines, columns, render));
    }
  }

  #push(block: TailBlock): void {
    this.#blocks.push(block);
    this.#written += block.written;
    while (
      this.#blocks.length > MAX_BLOCKS ||
      (this.#blocks.length > 1 && this.#written - this.#blocks[0].written >= MAX_ROWS)
    ) {
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
