/**
 * What `postForStream()` makes of servers that answer 200 but never give a usable stream: one
 * that streams forever, and one that sends a page instead of events. Each runs the real wire
 * providers against a server on 127.0.0.1.
 */
import assert from "node:assert/strict";
import type { ResolvedProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { sleep } from "../support/abortable_wait.ts";
import { streamFrom, withRawServer } from "../support/raw_model_server.ts";

type Api = ResolvedProvider["api"];

/** Far above any timeout set here: reached only when the call's own timeouts failed. */
const GUARD_MS = 20_000;

/** An SSE body that sends `chunk` every 20 ms until the reader goes or the server closes. */
function endless(chunk: () => string, closing: AbortSignal): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await sleep(20, closing);
      if (closing.aborted) controller.close();
      else controller.enqueue(encoder.encode(chunk()));
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** Runs one request against `baseUrl` in `api`, with the given timeouts. */
function call(
  api: Api,
  baseUrl: string,
  timeouts: { requestTimeoutMs: number; idleTimeoutMs: number },
): Promise<StreamEvent[]> {
  return streamFrom(api, baseUrl, timeouts, GUARD_MS);
}

const DEADLINE_MESSAGE =
  "Model API did not finish its answer within 300 ms (the request timeout): " +
  "raise requestTimeoutMs or TERN_REQUEST_TIMEOUT_MS to allow longer calls";

Deno.test("postForStream() ends a stream of text deltas that never finishes at the request timeout", async () => {
  const chunk = { choices: [{ index: 0, delta: { content: "la" } }] };
  const delta = `data: ${JSON.stringify(chunk)}\n\n`;
  await withRawServer((closing) => endless(() => delta, closing), async (baseUrl) => {
    const events = await call("openai", baseUrl, { requestTimeoutMs: 300, idleTimeoutMs: 5000 });
    assert.ok(events.some((event) => event.type === "text_delta"), "expected some text first");
    assert.deepEqual(events.at(-1), {
      type: "error",
      kind: "client",
      message: DEADLINE_MESSAGE,
      retryable: true,
      longTimeout: true,
    });
  });
});

Deno.test("postForStream() ends a stream of only keepalive comments at the request timeout, in any API", async () => {
  await withRawServer((closing) => endless(() => ": keepalive\n\n", closing), async (baseUrl) => {
    for (const api of ["openai", "openai-responses", "anthropic"] as const) {
      const events = await call(api, baseUrl, { requestTimeoutMs: 300, idleTimeoutMs: 5000 });
      assert.deepEqual(events, [{
        type: "error",
        kind: "client",
        message: DEADLINE_MESSAGE,
        retryable: true,
        longTimeout: true,
      }], api);
    }
  });
});

Deno.test("postForStream() reports a login page sent instead of events with its text, not retryable", async () => {
  const page = "<!DOCTYPE html>\n<html><head><title>Corporate proxy</title>\n" +
    "<style>body { color: red }</style><script>var a = 1 < 2;</script></head>\n" +
    "<body><!-- form --><h1>Sign in</h1><p>Your session has expired.</p></body></html>";
  const respond = () =>
    new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
  await withRawServer(respond, async (baseUrl) => {
    for (const api of ["openai", "openai-responses", "anthropic"] as const) {
      const events = await call(api, baseUrl, { requestTimeoutMs: 5000, idleTimeoutMs: 5000 });
      assert.deepEqual(events, [{
        type: "error",
        kind: "client",
        message: 'Model API sent "text/html" instead of an event stream: ' +
          '"Corporate proxy Sign in Your session has expired."',
      }], api);
    }
  });
});

Deno.test("postForStream() reads events labelled text/plain: some servers send their stream so", async () => {
  const events = [
    'data: {"id":"1","choices":[{"index":0,"delta":{"content":"hi"}}]}',
    'data: {"id":"1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    "data: [DONE]",
  ].join("\n\n") + "\n\n";
  const respond = () => new Response(events, { headers: { "content-type": "text/plain" } });
  await withRawServer(respond, async (baseUrl) => {
    const got = await call("openai", baseUrl, { requestTimeoutMs: 5000, idleTimeoutMs: 5000 });
    assert.ok(got.some((event) => event.type === "text_delta"), JSON.stringify(got));
    assert.ok(!got.some((event) => event.type === "error"), JSON.stringify(got));
  });
});

Deno.test("postForStream() keeps a finished answer whose server then holds the connection open", async () => {
  const finished = [
    'data: {"id":"1","choices":[{"index":0,"delta":{"content":"All done."}}]}',
    'data: {"id":"1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
  ].join("\n\n") + "\n\n";
  const respond = (closing: AbortSignal) => {
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(finished));
        // No [DONE], no end of the body: held until the server closes.
        await sleep(GUARD_MS, closing);
        controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  };
  await withRawServer(respond, async (baseUrl) => {
    const events = await call("openai", baseUrl, { requestTimeoutMs: 10_000, idleTimeoutMs: 300 });
    const last = events.at(-1);
    assert.equal(last?.type, "done", JSON.stringify(last));
    assert.equal(last?.type === "done" && last.message.content, "All done.");
  });
});

Deno.test("postForStream() reports the message of a JSON error body labelled as an event stream", async () => {
  const body = JSON.stringify(
    { error: { message: "The model `gpt-9` does not exist", type: "invalid_request_error" } },
    null,
    2,
  );
  const respond = () => new Response(body, { headers: { "content-type": "text/event-stream" } });
  await withRawServer(respond, async (baseUrl) => {
    for (const api of ["openai", "openai-responses", "anthropic"] as const) {
      const events = await call(api, baseUrl, { requestTimeoutMs: 5000, idleTimeoutMs: 5000 });
      assert.deepEqual(events, [{
        type: "error",
        kind: "client",
        message: "Model API stream error: The model `gpt-9` does not exist",
      }], api);
    }
  });
});

Deno.test("postForStream() does not retry a 429 for an exhausted quota, and reads other servers' error bodies", async () => {
  const answers: [number, unknown, string, boolean][] = [
    [
      429,
      { error: { message: "You exceeded your current quota.", type: "insufficient_quota" } },
      "HTTP 429 from model API: You exceeded your current quota.",
      false,
    ],
    [
      429,
      { error: { message: "Rate limit reached.", type: "requests", code: "rate_limit_exceeded" } },
      "HTTP 429 from model API: Rate limit reached.",
      true,
    ],
    [
      400,
      { object: "error", message: "max_tokens is too large", type: "BadRequestError", code: 400 },
      "HTTP 400 from model API: max_tokens is too large",
      false,
    ],
    [
      400,
      [{ error: { code: 400, message: "API key not valid.", status: "INVALID_ARGUMENT" } }],
      "HTTP 400 from model API: API key not valid.",
      false,
    ],
  ];
  for (const [status, body, message, retryable] of answers) {
    const respond = () => Response.json(body, { status });
    await withRawServer(respond, async (baseUrl) => {
      const events = await call("openai", baseUrl, { requestTimeoutMs: 5000, idleTimeoutMs: 5000 });
      const last = events.at(-1);
      assert.equal(last?.type === "error" && last.message, message);
      assert.equal(last?.type === "error" && last.retryable === true, retryable, message);
    });
  }
});

Deno.test("postForStream() marks a request over the context window, in each server's words, and nothing else", async () => {
  const answers: [number, unknown, boolean][] = [
    [400, {
      error: {
        message: "This model's maximum context length is 128000 tokens. However, your messages " +
          "resulted in 130512 tokens. Please reduce the length of the messages.",
        type: "invalid_request_error",
        code: "context_length_exceeded",
      },
    }, true],
    [400, {
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "prompt is too long: 210517 tokens > 200000 maximum",
      },
    }, true],
    [400, {
      error: { message: "the request exceeds the available context size, try increasing it" },
    }, true],
    [
      400,
      { error: { message: "The model `gpt-9` does not exist", type: "invalid_request_error" } },
      false,
    ],
    [
      500,
      { error: { message: "maximum context length is 8192 tokens, but the server crashed" } },
      false,
    ],
  ];
  for (const [status, body, overflow] of answers) {
    await withRawServer(() => Response.json(body, { status }), async (baseUrl) => {
      const events = await call("openai", baseUrl, { requestTimeoutMs: 5000, idleTimeoutMs: 5000 });
      const last = events.at(-1);
      assert.equal(
        last?.type === "error" && last.contextOverflow === true,
        overflow,
        JSON.stringify(body),
      );
    });
  }
});
