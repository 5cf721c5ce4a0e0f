import assert from "node:assert/strict";
import type { AssistantMessage } from "../../src/core/messages.ts";
import { STREAM_ENDED_EARLY_MESSAGE } from "../../src/llm/errors.ts";
import { createOpenAiResponsesProvider } from "../../src/llm/openai_responses.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";
import { type ScriptedServer, withScriptedServer } from "../support/scripted_server.ts";
import { done, lastError } from "../support/stream_events.ts";

const KEY = "sk-live-SECRET-0123456789abcdef";
const REQUEST: ModelRequest = {
  model: "gpt-test",
  messages: [{ role: "user", content: "hello" }],
  tools: [],
};
const READ_FILE = {
  name: "read_file",
  description: "Reads a file",
  parameters: { type: "object", properties: { path: { type: "string" } } },
};

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  const finals = events.filter((e) => e.type === "done" || e.type === "error");
  assert.equal(finals.length, 1, `expected one final event in ${JSON.stringify(events)}`);
  assert.equal(events.at(-1), finals[0]);
  assert.equal(JSON.stringify(events).includes(KEY), false, "the API key leaked into an event");
  return events;
}

/** Streams `request` once against a scripted server playing `replies`. */
async function run(
  replies: ScriptedReply[],
  check: (events: StreamEvent[], server: ScriptedServer) => void | Promise<void>,
  request: ModelRequest = REQUEST,
): Promise<void> {
  await withScriptedServer(replies, async (server) => {
    const provider = createOpenAiResponsesProvider({ baseUrl: server.baseUrl, apiKey: KEY });
    await check(await collect(provider.stream(request)), server);
  });
}

/** A one-off server answering every POST with these SSE payloads, for events the script lacks. */
async function withRawStream(
  payloads: unknown[],
  body: (baseUrl: string) => Promise<void>,
): Promise<void> {
  const text = payloads.map((p) => `data: ${JSON.stringify(p)}\n\n`).join("");
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(text, { headers: { "content-type": "text/event-stream" } }),
  );
  try {
    await body(`http://127.0.0.1:${server.addr.port}/v1`);
  } finally {
    await server.shutdown();
  }
}

Deno.test("createOpenAiResponsesProvider() streams a text reply in several deltas", async () => {
  await run([{ text: "The answer is forty-two, as always." }], (events, server) => {
    const deltas = events.filter((e) => e.type === "text_delta");
    assert.ok(deltas.length >= 3, `expected several text deltas, got ${deltas.length}`);
    assert.equal(deltas.map((e) => e.text).join(""), "The answer is forty-two, as always.");
    const end = done(events);
    assert.deepEqual(end.message, {
      role: "assistant",
      content: "The answer is forty-two, as always.",
    });
    assert.equal(end.finishReason, "stop");
    assert.equal(server.requests[0].path, "/v1/responses");
    assert.equal(server.requests[0].headers["authorization"], `Bearer ${KEY}`);
  });
});

Deno.test("createOpenAiResponsesProvider() assembles two tool calls keyed by call_id", async () => {
  const calls = [
    { id: "call_a", name: "read_file", arguments: '{"path":"src/main.ts","offset":10}' },
    { id: "call_b", name: "grep", arguments: '{"pattern":"TODO","glob":"*.ts"}' },
  ];
  await run([{ text: "Reading both.", toolCalls: calls }], (events) => {
    assert.deepEqual(events.filter((e) => e.type === "tool_call_delta"), [
      { type: "tool_call_delta", index: 0, id: "call_a", name: "read_file" },
      { type: "tool_call_delta", index: 0 },
      { type: "tool_call_delta", index: 0 },
      { type: "tool_call_delta", index: 0 },
      { type: "tool_call_delta", index: 1, id: "call_b", name: "grep" },
      { type: "tool_call_delta", index: 1 },
      { type: "tool_call_delta", index: 1 },
      { type: "tool_call_delta", index: 1 },
    ]);
    const end = done(events);
    assert.deepEqual(end.message, {
      role: "assistant",
      content: "Reading both.",
      toolCalls: calls,
    });
    assert.equal(end.finishReason, "tool_calls");
  });
});

Deno.test("createOpenAiResponsesProvider() reports usage with cached and reasoning tokens", async () => {
  const usage = { inputTokens: 1234, outputTokens: 56, cachedTokens: 1000, reasoningTokens: 7 };
  await run([{ text: "ok", usage }], (events) => {
    assert.deepEqual(done(events).usage, usage);
  });
});

Deno.test("createOpenAiResponsesProvider() keeps reasoning and sends it back before the call", async () => {
  const script: ScriptedReply[] = [
    {
      thinking: "The user wants a.ts, so read it.",
      toolCalls: [{ id: "call_r", name: "read_file", arguments: '{"path":"a.ts"}' }],
    },
    { text: "Done." },
  ];
  await withScriptedServer(script, async (server) => {
    const provider = createOpenAiResponsesProvider({ baseUrl: server.baseUrl, apiKey: KEY });
    const request: ModelRequest = {
      ...REQUEST,
      tools: [READ_FILE],
      reasoning: { effort: "high", budgetTokens: 0 },
    };
    const events = await collect(provider.stream(request));
    const thinking = events.filter((e) => e.type === "thinking_delta");
    assert.equal(thinking.length, 2);
    assert.equal(thinking.map((e) => e.text).join(""), "The user wants a.ts, so read it.");
    const first = done(events).message;
    assert.deepEqual(first.thinking, [{
      api: "openai-responses",
      text: "The user wants a.ts, so read it.",
      id: "rs_0",
      data: "enc-0",
      followedBy: { callId: "call_r" },
    }]);
    const replayed: AssistantMessage = {
      ...first,
      thinking: [...first.thinking ?? [], { api: "anthropic", text: "elsewhere", signature: "s" }],
    };
    done(
      await collect(provider.stream({
        ...request,
        messages: [
          ...request.messages,
          replayed,
          { role: "tool", toolCallId: "call_r", name: "read_file", content: "x = 1" },
        ],
      })),
    );
    assert.deepEqual(server.requests[1].body.input, [
      { type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] },
      {
        type: "reasoning",
        id: "rs_0",
        summary: [{ type: "summary_text", text: "The user wants a.ts, so read it." }],
        encrypted_content: "enc-0",
      },
      { type: "function_call", call_id: "call_r", name: "read_file", arguments: '{"path":"a.ts"}' },
      { type: "function_call_output", call_id: "call_r", output: "x = 1" },
    ]);
    assert.deepEqual(server.requests[1].modelRequest.messages[1], first);
  });
});

Deno.test("createOpenAiResponsesProvider() sends instructions, store false and reasoning settings", async () => {
  const request: ModelRequest = {
    model: "gpt-test",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Read a.ts" },
      {
        role: "assistant",
        content: "Reading.",
        toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"a.ts"}' }],
      },
      { role: "tool", toolCallId: "call_1", name: "read_file", content: "SUCCEEDED\nx" },
      { role: "system", content: "Answer now." },
    ],
    tools: [READ_FILE],
    maxTokens: 500,
    temperature: 0.2,
    reasoning: { effort: "medium", budgetTokens: 0 },
  };
  await run([{ text: "ok" }], (_events, server) => {
    const [recorded] = server.requests;
    assert.deepEqual(recorded.body, {
      model: "gpt-test",
      instructions: "Be brief.",
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "Read a.ts" }] },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "Reading." }],
        },
        {
          type: "function_call",
          call_id: "call_1",
          name: "read_file",
          arguments: '{"path":"a.ts"}',
        },
        { type: "function_call_output", call_id: "call_1", output: "SUCCEEDED\nx" },
        { type: "message", role: "system", content: "Answer now." },
      ],
      tools: [{ type: "function", ...READ_FILE, strict: false }],
      stream: true,
      store: false,
      max_output_tokens: 500,
      reasoning: { effort: "medium", summary: "auto" },
      include: ["reasoning.encrypted_content"],
    });
    const { temperature: _dropped, ...sent } = request;
    assert.deepEqual(recorded.modelRequest, sent);
  }, request);
});

Deno.test("createOpenAiResponsesProvider() sends temperature and no reasoning without reasoning", async () => {
  await run([{ text: "ok" }], (_events, server) => {
    const body = server.requests[0].body;
    assert.equal(body.temperature, 0.7);
    assert.equal("reasoning" in body, false);
    assert.equal("include" in body, false);
    assert.equal("instructions" in body, false);
    assert.equal("tools" in body, false);
  }, { ...REQUEST, temperature: 0.7 });
});

Deno.test("createOpenAiResponsesProvider() reports HTTP 401 without the key anywhere", async () => {
  await run([{ fault: "http401" }], (events) => {
    assert.deepEqual(lastError(events), {
      type: "error",
      kind: "client",
      status: 401,
      message: "HTTP 401 from model API: Incorrect API key provided",
    });
  });
});

Deno.test("createOpenAiResponsesProvider() reports HTTP 429 as retryable after Retry-After", async () => {
  await run([{ fault: "http429", retryAfter: "3" }], (events) => {
    const error = lastError(events);
    assert.equal(error.status, 429);
    assert.equal(error.retryable, true);
    assert.equal(error.retryAfterMs, 3000);
  });
});

Deno.test("createOpenAiResponsesProvider() reports HTTP 500 as retryable", async () => {
  await run([{ fault: "http500" }], (events) => {
    assert.deepEqual(lastError(events), {
      type: "error",
      kind: "client",
      status: 500,
      message: "HTTP 500 from model API: The server had an error while processing your request",
      retryable: true,
    });
  });
});

Deno.test("createOpenAiResponsesProvider() reports response.failed with the redacted message", async () => {
  const failed = {
    type: "response.failed",
    response: { status: "failed", error: { code: "server_error", message: `Boom near ${KEY}` } },
  };
  await withRawStream([{ type: "response.created", response: {} }, failed], async (baseUrl) => {
    const provider = createOpenAiResponsesProvider({ baseUrl, apiKey: KEY });
    assert.deepEqual(lastError(await collect(provider.stream(REQUEST))), {
      type: "error",
      kind: "client",
      message: "Model API stream error: Boom near [REDACTED]",
      retryable: true,
    });
  });
});

Deno.test("createOpenAiResponsesProvider() maps response.incomplete for max tokens to length", async () => {
  await run([{ text: "cut o", finishReason: "length" }], (events) => {
    const end = done(events);
    assert.equal(end.finishReason, "length");
    assert.equal(end.message.content, "cut o");
  });
});

Deno.test("createOpenAiResponsesProvider() reports a stream cut mid tool call as retryable", async () => {
  const reply: ScriptedReply = {
    text: "Let me look at it.",
    toolCalls: [{ id: "call_d", name: "read_file", arguments: '{"path":"a.ts"}' }],
    fault: "drop_mid_stream",
  };
  await run([reply], (events) => {
    const callAt = events.findIndex((e) =>
      e.type === "tool_call_delta" && e.id === "call_d" && e.name === "read_file"
    );
    assert.ok(callAt >= 0, `expected the start of the call in ${JSON.stringify(events)}`);
    assert.ok(events.some((e) => e.type === "text_delta"));
    const error = lastError(events);
    assert.equal(events.indexOf(error) > callAt, true);
    assert.equal(error.message, STREAM_ENDED_EARLY_MESSAGE);
    assert.equal(error.retryable, true);
  });
});

Deno.test("createOpenAiResponsesProvider() reports a data line that is not JSON", async () => {
  await run([{ text: "partial answer", fault: "malformed_sse" }], (events) => {
    assert.equal(
      lastError(events).message,
      'Cannot parse model API stream event "{not json": invalid JSON',
    );
  });
});

Deno.test("createOpenAiResponsesProvider() passes an empty response on as done", async () => {
  await run([{ fault: "empty" }], (events) => {
    assert.equal(events.length, 1);
    assert.deepEqual(done(events).message, { role: "assistant", content: "" });
  });
});

Deno.test("createOpenAiResponsesProvider() is named openai-responses unless told otherwise", () => {
  assert.equal(
    createOpenAiResponsesProvider({ baseUrl: "http://127.0.0.1:1/v1" }).name,
    "openai-responses",
  );
  assert.equal(
    createOpenAiResponsesProvider({ baseUrl: "http://127.0.0.1:1/v1", name: "azure" }).name,
    "azure",
  );
});
