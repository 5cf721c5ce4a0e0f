/** The log of one background process: its latest output, capped, read as a tail or a search. */

/** Characters a process's log keeps at most (the newest); older output is dropped. */
export const LOG_CHARS = 200_000;

/** A ring of the latest output text, at most `limit` characters. */
export class LogRing {
  readonly #limit: number;
  /** Slots before `#first` are dropped and hold "" (compacted in batches: many shift()s are slow). */
  #pieces: string[] = [];
  #first = 0;
  /**
   * Characters dropped from the front of the oldest kept piece. An offset rather than a
   * `slice()`: a copy on every trim would make a trickle after a large piece quadratic, and a
   * slice would keep its parent string alive anyway (V8 sliced strings).
   */
  #skip = 0;
  #length = 0;
  /** Characters appended in total, including dropped ones. */
  total = 0;

  constructor(limit = LOG_CHARS) {
    if (!(limit >= 1)) throw new RangeError(`Cannot keep a log of "${limit}" characters`);
    this.#limit = limit;
  }

  /** Characters dropped from the front so far. */
  get dropped(): number {
    return this.total - this.#length;
  }

  /**
   * Characters in the strings this ring references: the kept text plus the dropped head of its
   * oldest piece, so at most `limit` plus one piece (and under twice `limit`). Linear in the
   * number of pieces; for tests and diagnostics.
   */
  get held(): number {
    let chars = 0;
    for (const piece of this.#pieces) chars += piece.length;
    return chars;
  }

  append(text: string): void {
    if (text === "") return;
    this.total += text.length;
    // A piece longer than the whole ring keeps only its end, as a copy: a slice would keep
    // the whole of `text` alive.
    if (text.length > this.#limit) text = flatCopy(text.slice(text.length - this.#limit));
    this.#pieces.push(text);
    this.#length += text.length;
    while (this.#length > this.#limit) {
      const over = this.#length - this.#limit;
      const rest = this.#pieces[this.#first].length - this.#skip;
      if (rest <= over) {
        // Released now, not at the next compaction: 64 KiB pieces add up fast.
        this.#pieces[this.#first++] = "";
        this.#skip = 0;
        this.#length -= rest;
      } else {
        this.#skip += over;
        this.#length -= over;
      }
    }
    // Compacting only once the dropped slots outnumber the kept ones keeps appends linear.
    if (this.#first >= 64 && this.#first * 2 >= this.#pieces.length) {
      this.#pieces = this.#pieces.slice(this.#first);
      this.#first = 0;
    }
  }

  /** The last `count` lines kept (a last line without its newline counts). */
  tail(count: number): string[] {
    const lines = this.#lines();
    return count >= lines.length ? lines : lines.slice(lines.length - count);
  }

  /**
   * The kept lines containing `needle` (plain text, not a pattern: a pattern from the model
   * could make tern's own process backtrack for ever), case-insensitive, the last `max` of them.
   */
  grep(needle: string, max: number): string[] {
    const lower = needle.toLowerCase();
    const found = this.#lines().filter((line) => line.toLowerCase().includes(lower));
    return found.length > max ? found.slice(found.length - max) : found;
  }

  #lines(): string[] {
    const kept = this.#pieces.slice(this.#first);
    if (kept.length > 0) kept[0] = kept[0].slice(this.#skip);
    const text = kept.join("");
    if (text === "") return [];
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines;
  }
}

/**
 * `text` in a string of its own. V8 makes `slice()` of a long string a view that keeps the
 * parent alive, and `+ ""`, `structuredClone()` and `repeat(1)` return that same view; slicing
 * a concatenation first flattens it into a new string, so the result references only that copy
 * (one extra character). Checked with heap measurements on Deno 2's V8.
 */
function flatCopy(text: string): string {
  return (" " + text).slice(1);
}
