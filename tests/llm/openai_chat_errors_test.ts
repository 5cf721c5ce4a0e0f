import assert from "node:assert/strict";
import { isRetryableStreamError } from "../../src/llm/errors.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";
import { type ScriptedServer, startScriptedServer } from "../support/scripted_server.ts";
import { lastError } from "../support/stream_events.ts";

const KEY = "sk-live-SECRET-0123456789abcdef";
const REQUEST: ModelRequest = {
  model: "gpt-test",
  messages: [{ role: "user", content: "hello" }],
  tools: [],
};

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Runs one request against one scripted reply; checks the stream has one final event. */
async function runReply(
  reply: ScriptedReply,
  options: { idleTimeoutMs?: number; abortAfterHeaders?: boolean } = {},
): Promise<{ events: StreamEvent[]; server: ScriptedServer }> {
  const server = await startScriptedServer([reply]);
  try {
    const controller = new AbortController();
    const provider = createOpenAiChatProvider({
      baseUrl: server.baseUrl,
      apiKey: KEY,
      idleTimeoutMs: options.idleTimeoutMs,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (options.abortAfterHeaders) setTimeout(() => controller.abort(), 0);
        return response;
      },
    });
    const events = await collect(provider.stream(REQUEST, controller.signal));
    assertOneFinalEvent(events);
    assert.equal(JSON.stringify(events).includes(KEY), false, "the API key leaked into an event");
    return { events, server };
  } finally {
    await server.close();
  }
}

function assertOneFinalEvent(events: StreamEvent[]): void {
  const finals = events.filter((e) => e.type === "done" || e.type === "error");
  assert.equal(finals.length, 1, `expected one final event in ${JSON.stringify(events)}`);
  assert.equal(events.at(-1), finals[0]);
}

Deno.test("createOpenAiChatProvider() reports HTTP 500 with status and provider message", async () => {
  const { events } = await runReply({ fault: "http500" });
  assert.deepEqual(lastError(events), {
    type: "error",
    kind: "client",
    status: 500,
    message: "HTTP 500 from model API: The server had an error while processing your request",
    retryable: true,
  });
});

Deno.test("createOpenAiChatProvider() reports HTTP 429 with its status", async () => {
  const { events } = await runReply({ fault: "http429" });
  const error = lastError(events);
  assert.equal(error.kind, "client");
  assert.equal(error.status, 429);
  assert.equal(error.message, "HTTP 429 from model API: Rate limit reached for requests");
  assert.equal(error.retryable, true);
  assert.equal(error.retryAfterMs, 0, "Retry-After: 0 is read");
});

Deno.test("createOpenAiChatProvider() reads a Retry-After of seconds", async () => {
  const { events } = await runReply({ fault: "http429", retryAfter: "7" });
  assert.equal(lastError(events).retryAfterMs, 7000);
});

Deno.test("createOpenAiChatProvider() reports HTTP 401 without the key anywhere", async () => {
  const { events, server } = await runReply({ fault: "http401" });
  assert.equal(server.requests[0].headers["authorization"], `Bearer ${KEY}`);
  const error = lastError(events);
  assert.equal(error.status, 401);
  assert.equal(error.message, "HTTP 401 from model API: Incorrect API key provided");
});

Deno.test("createOpenAiChatProvider() redacts the key when the API echoes it back", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) =>
      Response.json({
        error: { message: `Incorrect API key provided: ${req.headers.get("authorization")}` },
      }, { status: 401 }),
  );
  try {
    const provider = createOpenAiChatProvider({
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
      apiKey: KEY,
    });
    const events = await collect(provider.stream(REQUEST));
    assert.equal(JSON.stringify(events).includes(KEY), false);
    assert.equal(
      lastError(events).message,
      "HTTP 401 from model API: Incorrect API key provided: Bearer [redacted]",
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("createOpenAiChatProvider() reports a connection dropped mid tool call", async () => {
  const { events } = await runReply({
    text: "Let me look.",
    toolCalls: [{ name: "read_file", arguments: '{"path":"a.ts"}' }],
    fault: "drop_mid_stream",
  });
  assert.ok(events.some((e) => e.type === "tool_call_delta"), "expected part of the tool call");
  const error = lastError(events);
  assert.equal(error.kind, "client");
  assert.match(error.message, /stream ended early/);
});

Deno.test("createOpenAiChatProvider() reports a data line that is not JSON", async () => {
  const { events } = await runReply({ text: "partial", fault: "malformed_sse" });
  const error = lastError(events);
  assert.equal(error.kind, "client");
  assert.equal(error.message, 'Cannot parse model API stream event "{not json": invalid JSON');
});

Deno.test("createOpenAiChatProvider() passes an empty response on as done", async () => {
  const { events } = await runReply({ fault: "empty" });
  assert.deepEqual(events.slice(0, -1), []);
  const last = events.at(-1);
  assert.equal(last?.type, "done");
  if (last?.type === "done") {
    assert.deepEqual(last.message, { role: "assistant", content: "" });
    assert.equal(last.finishReason, "stop");
  }
});

Deno.test("createOpenAiChatProvider() ends a hanging stream with aborted when the caller aborts", async () => {
  const { events } = await runReply({ fault: "hang" }, { abortAfterHeaders: true });
  assert.deepEqual(events, [{ type: "error", kind: "aborted", message: "Model request aborted" }]);
});

Deno.test("createOpenAiChatProvider() ends a hanging stream after the idle timeout", async () => {
  const { events } = await runReply({ fault: "hang" }, { idleTimeoutMs: 150 });
  assert.deepEqual(events, [{
    type: "error",
    kind: "client",
    message: "Model API stream stalled: no data for 150 ms",
    retryable: true,
  }]);
});

Deno.test("createOpenAiChatProvider() aborts before sending when the signal already fired", async () => {
  const server = await startScriptedServer([{ text: "never" }]);
  try {
    const controller = new AbortController();
    controller.abort();
    const provider = createOpenAiChatProvider({ baseUrl: server.baseUrl });
    const events = await collect(provider.stream(REQUEST, controller.signal));
    assert.equal(lastError(events).kind, "aborted");
    assert.equal(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

Deno.test("createOpenAiChatProvider() times out when no response headers arrive", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) accepted.push(conn);
  })();
  try {
    const provider = createOpenAiChatProvider({
      baseUrl: `http://127.0.0.1:${listener.addr.port}/v1`,
      requestTimeoutMs: 150,
    });
    const events = await collect(provider.stream(REQUEST));
    assert.deepEqual(events, [{
      type: "error",
      kind: "client",
      message: "Model API did not respond within 150 ms (the request timeout): raise " +
        "requestTimeoutMs or TERN_REQUEST_TIMEOUT_MS to allow longer calls",
      retryable: true,
      longTimeout: true,
    }]);
  } finally {
    listener.close();
    await accepting.catch(() => {});
    for (const conn of accepted) conn.close();
  }
});

Deno.test("createOpenAiChatProvider() reports a refused connection by origin only", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const provider = createOpenAiChatProvider({
    baseUrl: `http://127.0.0.1:${port}/v1?key=${KEY}`,
    apiKey: KEY,
  });
  const events = await collect(provider.stream(REQUEST));
  assert.deepEqual(events, [{
    type: "error",
    kind: "client",
    message: `Cannot connect to model API at "http://127.0.0.1:${port}": connection refused`,
    retryable: true,
  }]);
});

Deno.test("createOpenAiChatProvider() reports the scripted server running out of replies", async () => {
  const server = await startScriptedServer([]);
  try {
    const provider = createOpenAiChatProvider({ baseUrl: server.baseUrl });
    const error = lastError(await collect(provider.stream(REQUEST)));
    assert.equal(error.status, 500);
    assert.match(error.message, /no reply for request 1/);
  } finally {
    await server.close();
  }
});

Deno.test("createOpenAiChatProvider() reports an error object sent inside the stream", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
    new Response(
      `data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n` +
        `data: {"error":{"message":"Upstream overloaded"}}\n\n`,
      { headers: { "content-type": "text/event-stream" } },
    ));
  try {
    const provider = createOpenAiChatProvider({
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    });
    const events = await collect(provider.stream(REQUEST));
    assertOneFinalEvent(events);
    assert.equal(lastError(events).message, "Model API stream error: Upstream overloaded");
  } finally {
    await server.shutdown();
  }
});

Deno.test("createOpenAiChatProvider() reports a body that ends without a finish reason", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response(`data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n`, {
        headers: { "content-type": "text/event-stream" },
      }),
  );
  try {
    const provider = createOpenAiChatProvider({
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    });
    const events = await collect(provider.stream(REQUEST));
    assert.deepEqual(events, [
      { type: "text_delta", text: "hi" },
      {
        type: "error",
        kind: "client",
        message: "Model API stream ended early: no finish reason",
        retryable: true,
      },
    ]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("createOpenAiChatProvider() accepts a stream that ends after a finish reason without [DONE]", async () => {
  const chunks = [
    { choices: [{ index: 0, delta: { content: "hi" } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    { choices: [], usage: { prompt_tokens: 5, completion_tokens: 1 } },
  ];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join(""), {
        headers: { "content-type": "text/event-stream" },
      }),
  );
  try {
    const provider = createOpenAiChatProvider({
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    });
    const events = await collect(provider.stream(REQUEST));
    assert.deepEqual(events, [
      { type: "text_delta", text: "hi" },
      {
        type: "done",
        message: { role: "assistant", content: "hi" },
        finishReason: "stop",
        usage: { inputTokens: 5, outputTokens: 1, cachedTokens: 0, reasoningTokens: 0 },
      },
    ]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("isRetryableStreamError() retries a server that failed or is busy, not a rejected request", () => {
  const retried = [
    { type: "server_error" },
    { type: "rate_limit_exceeded" },
    { type: "overloaded_error" },
    { type: "InternalServerError", code: 500 },
    { code: 502 },
    { code: "429" },
  ];
  const not = [
    { type: "invalid_request_error", code: 400 },
    { code: "context_length_exceeded" },
    { message: "no type or code" },
    "a plain message",
    null,
  ];
  for (const error of retried) {
    assert.equal(isRetryableStreamError(error), true, JSON.stringify(error));
  }
  for (const error of not) {
    assert.equal(isRetryableStreamError(error), false, JSON.stringify(error));
  }
});
