/** Reads a byte stream as text lines, with a cap on a line's length. */

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
  let buffer = "";
  let skipping = false;
  const take = (text: string): ReadLine | undefined => {
    if (skipping) {
      skipping = false;
      return { tooLong: true };
    }
    return { line: text.endsWith("\r") ? text.slice(0, -1) : text };
  };
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const read = take(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (read) yield read;
    }
    if (buffer.length > maxChars) {
      skipping = true;
      buffer = "";
    }
  }
  buffer += decoder.decode();
  if (buffer !== "" || skipping) {
    const read = take(buffer);
    if (read) yield read;
  }
}
