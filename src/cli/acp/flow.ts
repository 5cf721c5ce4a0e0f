/**
 * `tern acp`'s reading held back by its writing. The SDK reads the editor's messages as fast as
 * they come and queues each answer until the editor reads it: an editor that sends requests but
 * does not read would grow tern's memory without bound. Here tern reads no further while more
 * than {@linkcode MAX_UNANSWERED} of the editor's requests wait for their answer to be written.
 */
import { ndJsonStream, type Stream } from "@agentclientprotocol/sdk";

/**
 * The most requests of the editor's that may wait for their answer to be written before tern
 * stops reading: far above what an editor has in flight (a prompt per open session, a few more).
 */
export const MAX_UNANSWERED = 256;

/** ACP over `output` and `input` (newline-delimited JSON), with the reading held back. */
export function flowControlledStream(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
): Stream {
  let unanswered = 0;
  let wake: (() => void) | undefined;
  const room = async () => {
    while (unanswered > MAX_UNANSWERED) {
      const { promise, resolve } = Promise.withResolvers<void>();
      wake = resolve;
      await promise;
    }
  };
  const reader = input.getReader();
  const held = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await room();
      const { value, done } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
  const inner = ndJsonStream(output, held);
  const counted = (message: unknown) =>
    typeof message === "object" && message !== null &&
    "id" in message;
  const readable = inner.readable.pipeThrough(
    new TransformStream({
      transform(message, controller) {
        // A request of the editor's: it waits until its answer is written.
        if (counted(message) && "method" in message) unanswered++;
        controller.enqueue(message);
      },
    }),
  );
  const writer = inner.writable.getWriter();
  const writable = new WritableStream({
    async write(message) {
      await writer.write(message);
      // An answer to one of the editor's requests is written.
      if (counted(message) && !("method" in message)) {
        unanswered--;
        if (unanswered <= MAX_UNANSWERED) wake?.();
      }
    },
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { readable, writable };
}
