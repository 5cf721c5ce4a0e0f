/**
 * The SDK's Streamable HTTP client transport, behind one import so its typing workaround lives
 * in one place: the `.js` subpath resolves at run time, the extensionless one has the types.
 * Beside it, the `fetch` tern gives it: a server's answers are capped as a stdio server's lines
 * are, and every body it left open is cancelled when the connection closes.
 */
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { sleep } from "../core/sleep.ts";

/**
 * Bytes one answer may have (a JSON body, or one event of an event stream): as a stdio server's
 * line. The SDK reads both whole, without a limit: an endless event took tern to its heap limit.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Least milliseconds between the starts of two GET streams (the server's own messages). The SDK
 * opens the stream again as soon as a server ends it, after the `retry` the server's events set:
 * `retry: 0` and an empty stream had tern send 170 requests a second for as long as it ran.
 */
export const MIN_GET_INTERVAL_MS = 1000;

/** Statuses whose response has no body (a Response with one cannot be made). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** A `fetch` for one server's transport, and the cancelling of what it left open. */
export interface CappedFetch {
  fetch: typeof fetch;
  /** Cancels every body still being read (the GET stream a server holds open). Never rejects. */
  cancelAll(): Promise<void>;
}

/**
 * {@linkcode CappedFetch}: each response's body passes through a count, and is cut with an error
 * naming `label` once one message passes `maxBytes` (an event stream's count starts again at each
 * blank line, the end of an event). Without this, a response a server holds open (the SDK's GET
 * stream) can keep `tern run` from exiting after its close: Deno keeps the body's resource. A GET
 * starts at least {@linkcode MIN_GET_INTERVAL_MS} after the one before (sooner when its request
 * is aborted, which then fails as aborted).
 */
export function cappedFetch(label: string, maxBytes = MAX_MESSAGE_BYTES): CappedFetch {
  const open = new Set<ReadableStreamDefaultReader<Uint8Array>>();
  let lastGet = -Infinity;
  const capped: typeof fetch = async (input, init) => {
    if ((init?.method ?? "GET").toUpperCase() === "GET") {
      await sleep(lastGet + MIN_GET_INTERVAL_MS - performance.now(), init?.signal);
      lastGet = performance.now();
    }
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      throw init?.signal?.aborted ? error : unreachable(error, input);
    }
    if (response.body === null || NULL_BODY.has(response.status)) return response;
    const reader = response.body.getReader();
    open.add(reader);
    const events = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    let size = 0;
    // Line ends in a row (an event ends at an empty line); `\r` is part of a line end.
    let ends = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          open.delete(reader);
          controller.error(error);
          return;
        }
        if (chunk.done) {
          open.delete(reader);
          controller.close();
          return;
        }
        if (!events) size += chunk.value.length;
        else {
          for (const byte of chunk.value) {
            size++;
            if (byte === 0x0a) {
              if (++ends >= 2) size = 0;
            } else if (byte !== 0x0d) {
              ends = 0;
            }
          }
        }
        if (size > maxBytes) {
          open.delete(reader);
          reader.cancel().catch(() => {});
          controller.error(
            new Error(
              `${label} sent a message of more than ${maxBytes / 1024 / 1024} MiB: refused`,
            ),
          );
          return;
        }
        controller.enqueue(chunk.value);
      },
      cancel(reason) {
        open.delete(reader);
        return reader.cancel(reason).catch(() => {});
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return {
    fetch: capped,
    async cancelAll() {
      const readers = [...open];
      open.clear();
      await Promise.all(readers.map((reader) => reader.cancel().catch(() => {})));
    },
  };
}

/**
 * A failed request's error, saying where it went by origin and why: Deno's own
 * message is a bare "fetch failed", its cause names the whole URL (its query may carry a key), so
 * every URL in the reason is cut to its origin. The cause stays, for the net permission check
 * (`netDeniedMessage`).
 */
function unreachable(error: unknown, input: Parameters<typeof fetch>[0]): unknown {
  if (!(error instanceof TypeError)) return error;
  const url = new URL(input instanceof Request ? input.url : String(input));
  const { origin } = url;
  const bare = new URL(url);
  bare.username = bare.password = "";
  let deepest: unknown = error;
  while (deepest instanceof Error && deepest.cause instanceof Error) deepest = deepest.cause;
  const reason = (deepest as Error).message
    .replaceAll(bare.href, origin)
    .replaceAll(url.href, origin)
    .replace(/^error sending request for url \([^)]*\): /, "")
    .replace(
      /\b[a-z][a-z0-9+.-]*:\/\/[^\s"')]*/gi,
      (url) => URL.canParse(url) ? new URL(url).origin : "<url>",
    );
  return new Error(`the request to ${origin} failed: ${reason}`, { cause: error });
}
