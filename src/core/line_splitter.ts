/**
 * Lines out of text that arrives in chunks (a process's stdout, a pipe), each character looked
 * at once. Appending each chunk to one string and searching it from the start again copies the
 * whole pending line per chunk: a 4.8 MB line (an image in a tool result) in 16 KB chunks took
 * half a second that way, and a hostile peer's 16 MB line seconds.
 */
export class LineSplitter {
  #parts: string[] = [];
  #pending = 0;

  /** Characters held of the line not yet ended. */
  get pending(): number {
    return this.#pending;
  }

  /** The lines `text` ends (without their "\n"); the rest is held for the next push. */
  push(text: string): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      this.#parts.push(text.slice(start, end));
      lines.push(this.#parts.length === 1 ? this.#parts[0] : this.#parts.join(""));
      this.#parts = [];
      this.#pending = 0;
      start = end + 1;
    }
    if (start < text.length) {
      this.#parts.push(start === 0 ? text : text.slice(start));
      this.#pending += text.length - start;
    }
    return lines;
  }

  /** Lets go of the line held so far (one too long to keep). */
  drop(): void {
    this.#parts = [];
    this.#pending = 0;
  }

  /** The last line, which no "\n" ended ("" when there is none); nothing is held after. */
  end(): string {
    const rest = this.#parts.join("");
    this.drop();
    return rest;
  }
}

/**
 * The lines of a byte stream as UTF-8 (without their "\n"); a last line without one counts too.
 * @throws what `limit.error` makes once a line grows past `limit.maxChars` (never held whole).
 */
export async function* streamLines(
  stream: ReadableStream<Uint8Array>,
  limit?: { maxChars: number; error: () => Error },
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const splitter = new LineSplitter();
  for await (const chunk of stream) {
    yield* splitter.push(decoder.decode(chunk, { stream: true }));
    if (limit !== undefined && splitter.pending > limit.maxChars) throw limit.error();
  }
  splitter.push(decoder.decode());
  const rest = splitter.end();
  if (rest !== "") yield rest;
}
