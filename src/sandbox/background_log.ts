/** The log of one background process: its latest output, capped, read as a tail or a search. */

/** Characters a process's log keeps at most (the newest); older output is dropped. */
export const LOG_CHARS = 200_000;

/** A ring of the latest output text, at most `limit` characters (whole pieces are dropped). */
export class LogRing {
  readonly #limit: number;
  #pieces: string[] = [];
  /** Pieces before this index are dropped (removed in batches: shift() of many is slow). */
  #first = 0;
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

  append(text: string): void {
    if (text === "") return;
    this.total += text.length;
    // A piece longer than the whole ring keeps only its end.
    if (text.length > this.#limit) text = text.slice(text.length - this.#limit);
    this.#pieces.push(text);
    this.#length += text.length;
    while (this.#length > this.#limit) {
      const first = this.#pieces[this.#first];
      const over = this.#length - this.#limit;
      if (first.length <= over) {
        this.#first++;
        this.#length -= first.length;
      } else {
        this.#pieces[this.#first] = first.slice(over);
        this.#length -= over;
      }
    }
    if (this.#first > 1024 && this.#first * 2 > this.#pieces.length) {
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
    const text = this.#pieces.slice(this.#first).join("");
    if (text === "") return [];
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines;
  }
}
