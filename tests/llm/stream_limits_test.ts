/**
 * Limits on what a model server can make tern read: an event that never ends, an answer that
 * never ends, an error body that is endless or falls silent, and a WebSocket close reason that
 * echoes the key. Real providers against servers on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { StreamTooLargeError } from "../../src/llm/errors.ts";
import { createWireProvider, type ResolvedProvider } from "../../src/llm/setup.ts";
import { MAX_EVENT_CHARS, readSseData, type SseReadOptions } from "../../src/llm/sse.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { done, lastError } from "../support/stream_events.ts";
import { streamOverSocket, withSocketPool } from "../support/socket_pool.ts";

const KEY = "sk-live-SECRET-0123456789abcdef";
/** Far above every limit here: reached only when a limit failed to end the read. */
const GUARD_MS = 20_000;

/** A body that sends `first`, then `chunk` again and again until cancelled. */
function endless(first: string, chunk: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const bytes = encoder.encode(chunk);
  let started = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(started ? bytes : encoder.encode(first));
      started = true;
    },
  });
}

/** A body that sends `text` and then nothing, never ending, until cancelled. */
function silentAfter(text: string, closing: AbortSignal): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      closing.addEventListener("abort", () => controller.close(), { once: true });
    },
  });
}

async function readAll(body: ReadableStream<Uint8Array>, options?: SseReadOptions) {
  const data: string[] = [];
  for await (const item of readSseData(body, options)) data.push(item);
  return data;
}

/** A server whose every answer is `respond(closing)`; `closing` fires as it shuts down. */
async function withServer(
  respond: (closing: AbortSignal) => Response,
  body: (baseUrl: string) => Promise<void>,
): Promise<void> {
  const closing = new AbortController();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    return respond(closing.signal);
  });
  try {
    await body(`http://127.0.0.1:${server.addr.port}/v1`);
  } finally {
    closing.abort();
    await server.shutdown();
  }
}

async function call(
  api: ResolvedProvider["api"],
  baseUrl: string,
  timeouts = { requestTimeoutMs: 5_000, idleTimeoutMs: 5_000 },
): Promise<StreamEvent[]> {
  const wire = createWireProvider(
    { name: api, api, baseUrl, apiKey: KEY, keyVariables: [], keyRequired: true },
    timeouts,
  );
  const request = { model: "m", messages: [{ role: "user" as const, content: "hi" }], tools: [] };
  const events: StreamEvent[] = [];
  for await (const event of wire.stream(request, AbortSignal.timeout(GUARD_MS))) {
    events.push(event);
  }
  assert.equal(JSON.stringify(events).includes(KEY), false, "the key leaked into an event");
  return events;
}

Deno.test("readSseData() stops at an event larger than maxEventChars and cancels the body", async () => {
  await assert.rejects(
    readAll(endless("data: ", "A".repeat(300)), { maxEventChars: 1000 }),
    (error) =>
      error instanceof StreamTooLargeError &&
      error.message ===
        "Model API sent an event larger than 1000 characters: tern stopped reading the answer",
  );
});

Deno.test("readSseData() counts an event of many data lines without a blank line as one", async () => {
  await assert.rejects(
    readAll(endless("", "data: AAAA\n"), { maxEventChars: 1000 }),
    StreamTooLargeError,
  );
});

Deno.test("readSseData() stops at an event larger than 64 MiB by default", async () => {
  assert.equal(MAX_EVENT_CHARS, 64 * 1024 * 1024);
  await assert.rejects(
    readAll(endless("data: ", "A".repeat(1024 * 1024))),
    (error) =>
      error instanceof StreamTooLargeError &&
      error.message ===
        "Model API sent an event larger than 64 MiB: tern stopped reading the answer",
  );
});

Deno.test("readSseData() stops once all events together pass maxAnswerChars, after yielding those before", async () => {
  const data: string[] = [];
  await assert.rejects(
    async () => {
      for await (
        const item of readSseData(endless("", "data: 0123456789\n\n"), { maxAnswerChars: 95 })
      ) {
        data.push(item);
      }
    },
    (error) =>
      error instanceof StreamTooLargeError &&
      error.message ===
        "Model API sent more than 95 characters in one answer: tern stopped reading it",
  );
  assert.equal(data.length, 9);
});

Deno.test("readSseData() stops once all events together pass 64 MiB by default", async () => {
  // Events of 1 MiB: the 65th passes the cap, so no answer's data reaches 256 MiB as it did.
  let events = 0;
  await assert.rejects(
    async () => {
      for await (const _ of readSseData(endless("", `data: ${"A".repeat(1024 * 1024)}\n\n`))) {
        events++;
      }
    },
    (error) =>
      error instanceof StreamTooLargeError &&
      error.message === "Model API sent more than 64 MiB in one answer: tern stopped reading it",
  );
  assert.equal(events, 64);
});

Deno.test("createWireProvider() ends an event line that never ends with a clear error, not retried", async () => {
  await withServer(
    () =>
      new Response(endless("data: ", "A".repeat(1024 * 1024)), {
        headers: { "content-type": "text/event-stream" },
      }),
    async (baseUrl) => {
      const error = lastError(await call("openai", baseUrl));
      assert.equal(
        error.message,
        "Model API sent an event larger than 64 MiB: tern stopped reading the answer",
      );
      assert.equal(error.retryable, undefined);
    },
  );
});

Deno.test("createWireProvider() reports an HTTP error whose body never ends with its status and start, in every API", async () => {
  await withServer(
    () => new Response(endless("upstream broke: ", "A".repeat(4096)), { status: 500 }),
    async (baseUrl) => {
      for (const api of ["openai", "openai-responses", "anthropic"] as const) {
        const error = lastError(await call(api, baseUrl));
        assert.match(error.message, /^HTTP 500 from model API: upstream broke: AAAA+…$/, api);
        assert.equal(error.status, 500);
        assert.equal(error.retryable, true);
      }
    },
  );
});

Deno.test("createWireProvider() reports an HTTP error whose body falls silent after the idle timeout, with what came", async () => {
  await withServer(
    (closing) => new Response(silentAfter("upstream broke", closing), { status: 502 }),
    async (baseUrl) => {
      const started = Date.now();
      const error = lastError(
        await call("openai", baseUrl, { requestTimeoutMs: 5_000, idleTimeoutMs: 200 }),
      );
      assert.equal(error.message, "HTTP 502 from model API: upstream broke");
      assert.ok(Date.now() - started < 4_000, "waited for the request timeout");
    },
  );
});

Deno.test("createWireProvider() reports JSON sent instead of events without reading an endless body", async () => {
  await withServer(
    () =>
      new Response(endless('{"error": {"message": "', "A".repeat(4096)), {
        headers: { "content-type": "application/json" },
      }),
    async (baseUrl) => {
      const started = Date.now();
      const error = lastError(await call("anthropic", baseUrl));
      assert.equal(error.message, "Model API sent JSON instead of an event stream");
      assert.ok(Date.now() - started < 4_000, "read on until the request timeout");
    },
  );
});

Deno.test("ResponsesSocketPool.stream() redacts the key from the close reason it reports", async () => {
  const accept = (socket: WebSocket) =>
    socket.addEventListener("message", () => {
      socket.send(JSON.stringify({ type: "response.output_text.delta", delta: "partial " }));
      socket.close(1008, `invalid key ${KEY}`);
    });
  const timeouts = { apiKey: KEY, requestTimeoutMs: 10_000, idleTimeoutMs: 5_000 };
  await withSocketPool(accept, timeouts, async (pool) => {
    const events = await streamOverSocket(pool, async function* () {
      yield {
        type: "done",
        message: { role: "assistant", content: "over http" },
        finishReason: "stop",
      };
    });
    assert.equal(done(events).message.content, "over http");
    const retry = events.find((event) => event.type === "retry");
    assert.ok(retry?.type === "retry");
    assert.match(retry.reason, /closed \(1008 invalid key \[redacted\]\)/);
    assert.equal(JSON.stringify(events).includes(KEY), false, "the key leaked into an event");
  });
});
