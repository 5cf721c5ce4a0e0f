import assert from "node:assert/strict";
import type { AssistantMessage } from "../../src/core/messages.ts";
import { createAnthropicProvider } from "../../src/llm/anthropic.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";
import { startScriptedServer, withScriptedServer } from "../support/scripted_server.ts";
import { done, lastError } from "../support/stream_events.ts";

const KEY = "sk-ant-SECRET-0123456789abcdef";
const REQUEST: ModelRequest = {
  model: "claude-test",
  messages: [{ role: "user", content: "hello" }],
  tools: [],
};

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  const finals = events.filter((e) => e.type === "done" || e.type === "error");
  assert.equal(finals.length, 1, `expected one final event in ${JSON.stringify(events)}`);
  assert.equal(events.at(-1), finals[0]);
  return events;
}

/** Plays one scripted reply to one request, with a key; checks the key never leaks. */
async function runReply(reply: ScriptedReply, request = REQUEST): Promise<StreamEvent[]> {
  let events: StreamEvent[] = [];
  await withScriptedServer([reply], async (server) => {
    const provider = createAnthropicProvider({ baseUrl: server.baseUrl, apiKey: KEY });
    events = await collect(provider.stream(request));
    assert.equal(server.requests[0].path, "/v1/messages");
  });
  assert.equal(JSON.stringify(events).includes(KEY), false, "the API key leaked into an event");
  return events;
}

Deno.test("createAnthropicProvider() streams a text reply in several deltas", async () => {
  const events = await runReply({ text: "The answer is forty-two, as always." });
  const deltas = events.flatMap((e) => e.type === "text_delta" ? [e.text] : []);
  assert.ok(deltas.length >= 3, `expected several text deltas, got ${deltas.length}`);
  assert.equal(deltas.join(""), "The answer is forty-two, as always.");
  const end = done(events);
  assert.deepEqual(end.message, {
    role: "assistant",
    content: "The answer is forty-two, as always.",
  });
  assert.equal(end.finishReason, "stop");
});

Deno.test("createAnthropicProvider() reassembles two tool calls split across events", async () => {
  const calls = [
    { id: "toolu_1", name: "read_file", arguments: '{"path":"src/main.ts","offset":10}' },
    { id: "toolu_2", name: "grep", arguments: '{"pattern":"TODO","glob":"*.ts"}' },
  ];
  const events = await runReply({ text: "Reading both.", toolCalls: calls });
  const deltas = events.filter((e) => e.type === "tool_call_delta");
  assert.deepEqual(deltas, [
    { type: "tool_call_delta", index: 0, id: "toolu_1", name: "read_file" },
    { type: "tool_call_delta", index: 0 },
    { type: "tool_call_delta", index: 0 },
    { type: "tool_call_delta", index: 0 },
    { type: "tool_call_delta", index: 1, id: "toolu_2", name: "grep" },
    { type: "tool_call_delta", index: 1 },
    { type: "tool_call_delta", index: 1 },
    { type: "tool_call_delta", index: 1 },
  ]);
  const end = done(events);
  assert.deepEqual(end.message, { role: "assistant", content: "Reading both.", toolCalls: calls });
  assert.equal(end.finishReason, "tool_calls");
});

Deno.test("createAnthropicProvider() merges usage from message_start and message_delta", async () => {
  const events = await runReply({
    text: "ok",
    usage: { inputTokens: 1234, outputTokens: 56, cachedTokens: 1000, cacheWriteTokens: 200 },
  });
  assert.deepEqual(done(events).usage, {
    inputTokens: 1234,
    outputTokens: 56,
    cachedTokens: 1000,
    reasoningTokens: 0,
    cacheWriteTokens: 200,
  });
});

Deno.test("createAnthropicProvider() streams thinking and sends it back signed on the next request", async () => {
  const script: ScriptedReply[] = [
    {
      thinking: "The user wants a.ts; read it first.",
      toolCalls: [{ id: "toolu_1", name: "read_file", arguments: '{"path":"a.ts"}' }],
    },
    { text: "Done." },
  ];
  await withScriptedServer(script, async (server) => {
    const provider = createAnthropicProvider({ baseUrl: server.baseUrl });
    const request: ModelRequest = { ...REQUEST, reasoning: { effort: "low", budgetTokens: 4000 } };
    const first = await collect(provider.stream(request));
    const thinking = first.flatMap((e) => e.type === "thinking_delta" ? [e.text] : []);
    assert.equal(thinking.length, 2);
    assert.equal(thinking.join(""), "The user wants a.ts; read it first.");
    const message = done(first).message;
    assert.deepEqual(message.thinking, [
      { api: "anthropic", text: "The user wants a.ts; read it first.", signature: "sig-0" },
    ]);
    assert.equal(message.content, "");

    const withForeign: AssistantMessage = {
      ...message,
      thinking: [{ api: "openai", text: "foreign reasoning" }, ...(message.thinking ?? [])],
    };
    await collect(provider.stream({
      ...request,
      messages: [
        ...request.messages,
        withForeign,
        { role: "tool", toolCallId: "toolu_1", name: "read_file", content: "x = 1" },
      ],
    }));
    const sent = server.requests[1].body.messages as { role: string; content: unknown[] }[];
    assert.deepEqual(sent[1], {
      role: "assistant",
      content: [
        {
          type: "thinking",
          thinking: "The user wants a.ts; read it first.",
          signature: "sig-0",
        },
        { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.ts" } },
      ],
    });
    assert.equal(JSON.stringify(server.requests[1].body).includes("foreign reasoning"), false);
  });
});

Deno.test("createAnthropicProvider() sends system, tools and merged tool results in Anthropic's shape", async () => {
  const request: ModelRequest = {
    model: "claude-test",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Read a.ts and b.ts" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "toolu_1", name: "read_file", arguments: '{"path":"a.ts"}' },
          { id: "toolu_2", name: "read_file", arguments: '{"path":"b.ts"}' },
        ],
      },
      { role: "tool", toolCallId: "toolu_1", name: "read_file", content: "A" },
      { role: "tool", toolCallId: "toolu_2", name: "read_file", content: "B" },
      { role: "user", content: "Now compare them" },
    ],
    tools: [
      { name: "read_file", description: "Reads a file", parameters: { type: "object" } },
      { name: "grep", description: "Searches", parameters: { type: "object" } },
    ],
    temperature: 0.2,
  };
  await withScriptedServer([{ text: "ok" }], async (server) => {
    const provider = createAnthropicProvider({ baseUrl: server.baseUrl, apiKey: KEY });
    done(await collect(provider.stream(request)));
    const { body, headers, modelRequest } = server.requests[0];
    assert.equal(headers["x-api-key"], KEY);
    assert.equal(headers["anthropic-version"], "2023-06-01");
    assert.equal(headers["authorization"], undefined);
    assert.equal(body.max_tokens, 8192);
    assert.equal(body.temperature, 0.2);
    assert.equal(body.stream, true);
    assert.equal(body.thinking, undefined);
    assert.deepEqual(body.system, [
      { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
    ]);
    assert.deepEqual(body.tools, [
      { name: "read_file", description: "Reads a file", input_schema: { type: "object" } },
      {
        name: "grep",
        description: "Searches",
        input_schema: { type: "object" },
        cache_control: { type: "ephemeral" },
      },
    ]);
    assert.deepEqual((body.messages as unknown[]).slice(2), [{
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "A" },
        { type: "tool_result", tool_use_id: "toolu_2", content: "B" },
        { type: "text", text: "Now compare them", cache_control: { type: "ephemeral" } },
      ],
    }]);
    // The dialect reads the body back into the request tern sent.
    assert.deepEqual(modelRequest, { ...request, maxTokens: 8192 });
  });
});

Deno.test("createAnthropicProvider() sends a thinking budget with room for the answer and no temperature", async () => {
  await withScriptedServer([{ text: "ok" }], async (server) => {
    const provider = createAnthropicProvider({ baseUrl: server.baseUrl });
    done(
      await collect(provider.stream({
        ...REQUEST,
        maxTokens: 2000,
        temperature: 0.7,
        reasoning: { effort: "medium", budgetTokens: 10_000 },
      })),
    );
    const { body, headers, modelRequest } = server.requests[0];
    assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 10_000 });
    assert.equal(body.max_tokens, 11_024);
    assert.equal("temperature" in body, false);
    assert.equal(headers["x-api-key"], undefined, "no key, no header");
    assert.deepEqual(modelRequest.reasoning, { effort: "medium", budgetTokens: 10_000 });
  });
});

Deno.test("createAnthropicProvider() reports HTTP 401 with its status and without the key", async () => {
  const error = lastError(await runReply({ fault: "http401" }));
  assert.deepEqual(error, {
    type: "error",
    kind: "client",
    status: 401,
    message: "HTTP 401 from model API: Incorrect API key provided",
  });
});

Deno.test("createAnthropicProvider() reports HTTP 429 as retryable with Retry-After", async () => {
  const error = lastError(await runReply({ fault: "http429", retryAfter: "3" }));
  assert.equal(error.status, 429);
  assert.equal(error.message, "HTTP 429 from model API: Rate limit reached for requests");
  assert.equal(error.retryable, true);
  assert.equal(error.retryAfterMs, 3000);
});

Deno.test("createAnthropicProvider() reports HTTP 500 as retryable", async () => {
  const error = lastError(await runReply({ fault: "http500" }));
  assert.equal(error.status, 500);
  assert.equal(error.retryable, true);
  assert.match(error.message, /^HTTP 500 from model API: The server had an error/);
});

Deno.test("createAnthropicProvider() reports an error event sent mid-stream", async () => {
  const body = [
    `event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
    `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
    `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`,
  ].join("\n\n") + "\n\n";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
  );
  try {
    const provider = createAnthropicProvider({
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    });
    const events = await collect(provider.stream(REQUEST));
    assert.deepEqual(events, [
      { type: "text_delta", text: "Hel" },
      {
        type: "error",
        kind: "client",
        message: "Model API stream error: Overloaded",
        retryable: true,
      },
    ]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("createAnthropicProvider() reports a stream cut mid tool call as retryable", async () => {
  const events = await runReply({
    text: "Let me read the file now.",
    fault: "drop_mid_stream",
    toolCalls: [{ id: "toolu_9", name: "read_file", arguments: '{"path":"src/a.ts"}' }],
  });
  const deltas = events.filter((e) => e.type === "tool_call_delta");
  assert.deepEqual(deltas[0], {
    type: "tool_call_delta",
    index: 0,
    id: "toolu_9",
    name: "read_file",
  });
  assert.equal(events.at(-2)?.type, "tool_call_delta");
  assert.deepEqual(lastError(events), {
    type: "error",
    kind: "client",
    message: "Model API stream ended early: connection lost",
    retryable: true,
  });
});

Deno.test("createAnthropicProvider() reports a malformed event after the first text", async () => {
  const events = await runReply({ text: "Hello there, friend.", fault: "malformed_sse" });
  assert.equal(events[0].type, "text_delta");
  assert.deepEqual(lastError(events), {
    type: "error",
    kind: "client",
    message: 'Cannot parse model API stream event "{not json": invalid JSON',
  });
});

Deno.test("createAnthropicProvider() ends an empty reply with empty text", async () => {
  const end = done(await runReply({ fault: "empty" }));
  assert.deepEqual(end.message, { role: "assistant", content: "" });
  assert.equal(end.finishReason, "stop");
});

Deno.test("createAnthropicProvider() ends a hanging stream after the idle timeout", async () => {
  const server = await startScriptedServer([{ fault: "hang" }]);
  try {
    const provider = createAnthropicProvider({ baseUrl: server.baseUrl, idleTimeoutMs: 150 });
    const error = lastError(await collect(provider.stream(REQUEST)));
    assert.equal(error.message, "Model API stream stalled: no data for 150 ms");
    assert.equal(error.retryable, true);
  } finally {
    await server.close();
  }
});
