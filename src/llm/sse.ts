/** Server-sent events over a fetch body, with an idle timeout between reads. */
import { createParser } from "eventsource-parser";
import { IdleTimeoutError } from "./errors.ts";
import { after, type Timer } from "../core/timer.ts";

export interface SseReadOptions {
  /**
   * Longest wait for the next bytes, in milliseconds. Only time spent waiting on the network
   * counts, not time the consumer spends between events. Default: no limit.
   */
  idleTimeoutMs?: number;
}

/**
 * Yields the `data` of each event in `body`, in order. Throws `IdleTimeoutError` when no bytes
 * arrive within `idleTimeoutMs`, and rethrows read errors (a dropped connection). Cancels the
 * body when the consumer stops early or an error ends the read.
 */
export async function* readSseData(
  body: ReadableStream<Uint8Array>,
  options: SseReadOptions = {},
): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const pending: string[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event.data) });
  let ended = false;
  try {
    while (!ended) {
      const chunk = await readWithin(reader, options.idleTimeoutMs);
      if (chunk.done) {
        parser.feed(decoder.decode());
        ended = true;
      } else {
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
      while (pending.length > 0) yield pending.shift() as string;
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  timeoutMs: number | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  if (timeoutMs === undefined || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    return await reader.read();
  }
  let timer: Timer | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = after(timeoutMs, () => reject(new IdleTimeoutError(timeoutMs)));
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } finally {
    timer?.cancel();
  }
}
