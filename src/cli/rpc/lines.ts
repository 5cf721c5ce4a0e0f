/** Reads a byte stream as text lines, with a cap on a line's length. */
import { LineSplitter } from "../../core/line_splitter.ts";

/** One line, or the note that a line was longer than the cap (its text dropped). */
export type ReadLine = { line: string } | { tooLong: true };

/**
 * The lines of `stream` ("\n" or "\r\n" ended; a last line without one counts). A line longer
 * than `maxChars` is dropped as it arrives, never held whole, and reported as `tooLong`.
 */
export async function* readLines(
  stream: ReadableStream<Uint8Array>,
  maxChars: number,
): AsyncGenerator<ReadLine> {
  const decoder = new TextDecoder();
  const splitter = new LineSplitter();
  let skipping = false;
  const take = (text: string): ReadLine | undefined => {
    if (skipping) {
      skipping = false;
      return { tooLong: true };
    }
    return { line: text.endsWith("\r") ? text.slice(0, -1) : text };
  };
  for await (const chunk of stream) {
    for (const text of splitter.push(decoder.decode(chunk, { stream: true }))) {
      const read = take(text);
      if (read) yield read;
    }
    if (splitter.pending > maxChars) {
      skipping = true;
      splitter.drop();
    }
  }
  splitter.push(decoder.decode());
  const rest = splitter.end();
  if (rest !== "" || skipping) {
    const read = take(rest);
    if (read) yield read;
  }
}
