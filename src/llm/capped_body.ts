/** Reading a whole (non-streamed) answer from a server that may never end it. */
import { IdleTimeoutError } from "./errors.ts";
import { readWithin } from "./sse.ts";

/** The start of a body. */
export interface CappedText {
  text: string;
  /**
   * True when the body was not read to its end: it went on past `maxBytes` or fell silent for
   * `idleTimeoutMs`. What came before is in `text`; the rest was cancelled.
   */
  cut: boolean;
}

/**
 * Reads `body` as UTF-8 text, at most `maxBytes` of it, waiting at most `idleTimeoutMs` for
 * each chunk (default: no limit). A gzip bomb or an endless or stalled answer costs at most
 * `maxBytes` and one idle timeout.
 * @throws whatever reading the body throws (a dropped connection, an aborted request).
 */
export async function readCappedText(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  options: { idleTimeoutMs?: number } = {},
): Promise<CappedText> {
  if (body === null) return { text: "", cut: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  try {
    for (;;) {
      const { done, value } = await readWithin(reader, options.idleTimeoutMs);
      if (done) break;
      const room = maxBytes - size;
      chunks.push(value.length > room ? value.subarray(0, room) : value);
      size += Math.min(value.length, room);
      if (value.length > room) {
        cut = true;
        break;
      }
    }
  } catch (error) {
    if (!(error instanceof IdleTimeoutError)) throw error;
    cut = true;
  } finally {
    if (cut) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { text: new TextDecoder().decode(bytes), cut };
}
