/**
 * The bound on what a language server sends: its stdout read as LSP frames (headers, a blank
 * line, a body of Content-Length bytes) before `vscode-jsonrpc` buffers it. That reader keeps a
 * whole body in memory until the last byte came and scans the buffered bytes for a header's end
 * again at every chunk, so a server (a program the project's files steer) that announces a body
 * of gigabytes, or sends a header that never ends, grows tern's memory or holds its thread
 * without bound. Here each frame's header is at most {@linkcode MAX_HEADER} bytes with a valid
 * Content-Length of at most {@linkcode MAX_SERVER_MESSAGE}; the first frame past them ends the
 * stream, before any of it reaches the reader; so does more than {@linkcode MAX_FLOOD_BYTES}
 * within {@linkcode FLOOD_WINDOW_MS} (a flood of small messages). The other way, what tern
 * sends waits in the writer's queue while the server does not read: a server that floods
 * requests (each answered) and reads nothing would grow it without end, so at most
 * {@linkcode MAX_UNREAD} messages wait.
 */
import { type Message, StreamMessageWriter } from "vscode-jsonrpc/node";

/** The largest message body a language server may send, in bytes (16 MiB). */
export const MAX_SERVER_MESSAGE = 16 * 1024 * 1024;
/** The longest header of one message, in bytes. */
export const MAX_HEADER = 4096;
/**
 * The most a language server may send within {@linkcode FLOOD_WINDOW_MS}, in bytes (32 MiB):
 * each message is parsed on tern's thread, so a server that sends without end (log messages,
 * publishes of its open files) would hold it while no check waits.
 */
export const MAX_FLOOD_BYTES = 32 * 1024 * 1024;
/** The window {@linkcode MAX_FLOOD_BYTES} counts in, in milliseconds. */
export const FLOOD_WINDOW_MS = 10_000;

/**
 * A stream that passes a server's stdout on while its frames keep within the bounds; at the
 * first that does not it calls `breach` once with why (`it sent a message of 4000000000 bytes,
 * more than …`) and ends, passing none of that chunk on.
 */
export function messageBound(
  breach: (why: string) => void,
  limit: number = MAX_SERVER_MESSAGE,
): TransformStream<Uint8Array, Uint8Array> {
  let header: number[] = [];
  /** Bytes of the current body still to come. */
  let body = 0;
  /** When the current flood window began, and the bytes sent in it. */
  let windowStart = Date.now();
  let sent = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const fail = (why: string) => {
        breach(why);
        controller.terminate();
      };
      const now = Date.now();
      if (now - windowStart >= FLOOD_WINDOW_MS) {
        windowStart = now;
        sent = 0;
      }
      sent += chunk.length;
      if (sent > MAX_FLOOD_BYTES) {
        return fail(
          `it sent more than ${MAX_FLOOD_BYTES} bytes within ${FLOOD_WINDOW_MS / 1000} s`,
        );
      }
      let at = 0;
      while (at < chunk.length) {
        if (body > 0) {
          const taken = Math.min(body, chunk.length - at);
          body -= taken;
          at += taken;
          continue;
        }
        header.push(chunk[at++]);
        if (header.length > MAX_HEADER) {
          return fail(`it sent a message header longer than ${MAX_HEADER} bytes`);
        }
        if (!endsHeader(header)) continue;
        const length = contentLength(header);
        header = [];
        if (length === undefined) {
          return fail("it sent a message header that is malformed or has no valid Content-Length");
        }
        if (length > limit) {
          return fail(
            `it sent a message of ${length} bytes, more than the ${limit} a language server may send`,
          );
        }
        body = length;
      }
      controller.enqueue(chunk);
    },
  });
}

/** Whether `bytes` end with the blank line that ends a header (`\r\n\r\n`). */
function endsHeader(bytes: number[]): boolean {
  const n = bytes.length;
  return n >= 4 && bytes[n - 4] === 13 && bytes[n - 3] === 10 && bytes[n - 2] === 13 &&
    bytes[n - 1] === 10;
}

/**
 * The Content-Length a header gives (the last, as the reader takes it); undefined if none, or
 * when the header is not plain ASCII lines each ended by CRLF: the reader's own scan misses a
 * header's end after a stray CR and reads bytes past ASCII without their high bit, so such a
 * header would make it read the frames apart from this count (a body of gigabytes unseen here).
 */
function contentLength(bytes: number[]): number | undefined {
  const text = String.fromCharCode(...bytes);
  if (bytes.some((byte) => byte > 0x7f) || /\r(?!\n)|(?<!\r)\n/.test(text)) return undefined;
  let length: number | undefined;
  for (const line of text.split("\r\n")) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon === -1) return undefined;
    if (line.slice(0, colon).toLowerCase() !== "content-length") continue;
    const value = line.slice(colon + 1).trim();
    length = /^\d{1,15}$/.test(value) ? Number(value) : undefined;
  }
  return length;
}

/** The most messages to a server that may wait for it to read them. */
export const MAX_UNREAD = 1_000;

/**
 * The writer of messages to a server: at {@linkcode MAX_UNREAD} messages waiting, it calls
 * `breach` once and refuses the message.
 */
export class BoundedMessageWriter extends StreamMessageWriter {
  #waiting = 0;
  #breach: (why: string) => void;

  constructor(
    writable: ConstructorParameters<typeof StreamMessageWriter>[0],
    breach: (why: string) => void,
  ) {
    super(writable);
    this.#breach = breach;
  }

  override async write(message: Message): Promise<void> {
    if (this.#waiting >= MAX_UNREAD) {
      const why = `it left ${MAX_UNREAD} messages of tern's unread`;
      this.#breach(why);
      throw new Error(why);
    }
    this.#waiting++;
    try {
      await super.write(message);
    } finally {
      this.#waiting--;
    }
  }
}
