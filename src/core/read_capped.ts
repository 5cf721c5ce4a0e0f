/** Reading a child's output stream with a byte cap (git's, the web request process's). */

/**
 * Reads `stream` to its end, keeping the first `limit` bytes. Past the limit it calls
 * `onOverflow` (if given, and then stops reading) or keeps draining, so the writer never blocks.
 */
export async function readCapped(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  onOverflow?: () => void,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  let truncated = false;
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const room = limit - length;
    if (value.length > room) {
      truncated = true;
      if (room > 0) chunks.push(value.subarray(0, room));
      length = limit;
      if (onOverflow) {
        onOverflow();
        await reader.cancel();
        break;
      }
      continue;
    }
    chunks.push(value);
    length += value.length;
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, truncated };
}
