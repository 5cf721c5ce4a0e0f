/**
 * What each wire API makes of stream events whose fields have the wrong type (a tool call's
 * arguments as an object, a name that is a list, a text delta that is not text), of token
 * counts that are not counts, and of two calls with one id. Hand-written streams from a server
 * on 127.0.0.1, read by the real providers.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { runTurn } from "../../src/agent/loop.ts";
import { createWireProvider, type ResolvedProvider } from "../../src/llm/setup.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";
import { uniqueCallIds } from "../../src/llm/wire_fields.ts";
import { defineTool } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { done, lastError } from "../support/stream_events.ts";
import { streamOverSocket, withSocketPool } from "../support/socket_pool.ts";

type Api = ResolvedProvider["api"];

const REQUEST: ModelRequest = {
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
};

/** An SSE body of `events`, each as one `data:` line. */
function sse(events: unknown[], end = ""): string {
  return events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") + end;
}

/** A server that answers request i with `bodies[i]` as an event stream. */
async function withStreams(
  bodies: string[],
  body: (baseUrl: string) => Promise<void>,
): Promise<void> {
  let served = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    const text = bodies[served++];
    if (text === undefined) return new Response("no more streams", { status: 500 });
    return new Response(text, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    await body(`http://127.0.0.1:${server.addr.port}/v1`);
  } finally {
    await server.shutdown();
  }
}

function provider(api: Api, baseUrl: string) {
  return createWireProvider(
    { name: api, api, baseUrl, apiKey: "sk-test-0123456789", keyVariables: [], keyRequired: true },
    { requestTimeoutMs: 10_000, idleTimeoutMs: 5_000 },
  );
}

/** The events of one request in `api` answered with `body`. */
async function reply(api: Api, body: string): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  await withStreams([body], async (baseUrl) => {
    for await (const event of provider(api, baseUrl).stream(REQUEST)) events.push(event);
  });
  return events;
}

/** Chat Completions: one chunk per delta, then a finish reason and `[DONE]`. */
function chat(deltas: unknown[], finish = "tool_calls", usage?: unknown): string {
  return sse([
    ...deltas.map((delta) => ({ choices: [{ index: 0, delta }] })),
    { choices: [{ index: 0, delta: {}, finish_reason: finish }], usage },
  ], "data: [DONE]\n\n");
}

/** Responses: the events, then `response.completed`. */
function responses(events: unknown[], usage?: unknown): string {
  return sse([...events, { type: "response.completed", response: { id: "r1", usage } }]);
}

/** Anthropic: the events inside `message_start` … `message_stop`. */
function anthropic(events: unknown[], stop = "tool_use", usage?: unknown): string {
  return sse([
    { type: "message_start", message: { usage: { input_tokens: 5, output_tokens: 1 } } },
    ...events,
    { type: "message_delta", delta: { stop_reason: stop }, usage },
    { type: "message_stop" },
  ]);
}

function functionCall(fields: Record<string, unknown>) {
  return {
    type: "response.output_item.added",
    output_index: 0,
    item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "bash", ...fields },
  };
}

function toolUse(fields: Record<string, unknown>, index = 0) {
  return {
    type: "content_block_start",
    index,
    content_block: { type: "tool_use", id: "toolu_1", name: "bash", input: {}, ...fields },
  };
}

/** Asserts every field of every tool call of the final message is a string. */
function assertStringCalls(events: StreamEvent[]) {
  for (const call of done(events).message.toolCalls ?? []) {
    for (const field of ["id", "name", "arguments"] as const) {
      assert.equal(typeof call[field], "string", `${field} of ${JSON.stringify(call)}`);
    }
  }
}

Deno.test("createWireProvider() writes tool call arguments sent as an object as JSON text, in every API", async () => {
  const args = { command: "echo x" };
  const cases: [Api, string][] = [
    [
      "openai",
      chat([{ tool_calls: [{ index: 0, id: "c1", function: { name: "bash", arguments: args } }] }]),
    ],
    ["openai-responses", responses([functionCall({ arguments: args })])],
    [
      "openai-responses",
      responses([{
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "function_call", id: "fc_1", call_id: "c1", name: "bash", arguments: args },
      }]),
    ],
    ["anthropic", anthropic([toolUse({ id: "c1", input: args })])],
  ];
  for (const [api, body] of cases) {
    const events = await reply(api, body);
    assertStringCalls(events);
    const [call] = done(events).message.toolCalls ?? [];
    assert.equal(call.name, "bash", api);
    assert.deepEqual(JSON.parse(call.arguments), args, api);
  }
});

Deno.test("createWireProvider() ends with a clear error, not retried, for a tool call id or name that is not a string, in every API", async () => {
  const cases: [Api, string, RegExp][] = [
    [
      "openai",
      chat([{
        tool_calls: [{ index: 0, id: "c1", function: { name: ["bash"], arguments: "{}" } }],
      }]),
      /tool call name \["bash"\] is not a string/,
    ],
    [
      "openai",
      chat([{ tool_calls: [{ index: 0, id: { evil: 1 }, function: { name: "bash" } }] }]),
      /tool call id \{"evil":1\} is not a string/,
    ],
    [
      "openai-responses",
      responses([functionCall({ name: ["bash"] })]),
      /tool call name \["bash"\] is not a string/,
    ],
    [
      "openai-responses",
      responses([functionCall({ call_id: { evil: 1 } })]),
      /tool call id \{"evil":1\} is not a string/,
    ],
    [
      "openai-responses",
      responses([{
        type: "response.output_item.done",
        output_index: 3,
        item: { type: "function_call", id: "fc_9", call_id: 7, name: "bash" },
      }]),
      /tool call id 7 is not a string/,
    ],
    [
      "openai-responses",
      responses([{
        type: "response.output_item.done",
        item: { type: "reasoning", id: ["rs"], summary: [] },
      }]),
      /reasoning item id \["rs"\] is not a string/,
    ],
    ["anthropic", anthropic([toolUse({ name: 42 })]), /tool call name 42 is not a string/],
    [
      "anthropic",
      anthropic([toolUse({ id: { evil: 1 } })]),
      /tool call id \{"evil":1\} is not a string/,
    ],
    [
      "anthropic",
      anthropic([{
        type: "content_block_start",
        index: 0,
        content_block: { type: "redacted_thinking", data: { x: 1 } },
      }], "end_turn"),
      /redacted thinking data \{"x":1\} is not a string/,
    ],
  ];
  for (const [api, body, message] of cases) {
    const error = lastError(await reply(api, body));
    assert.match(error.message, /^Cannot read model API stream event: /, api);
    assert.match(error.message, message, api);
    assert.equal(error.retryable, undefined, api);
  }
});

Deno.test("createWireProvider() drops text, reasoning and argument deltas that are not text, in every API", async () => {
  const chatBody = chat([
    { content: ["a"], reasoning_content: { x: 1 } },
    { content: "ok", refusal: 5 },
    { tool_calls: [{ index: 0, id: "c1", function: { name: "bash", arguments: '{"a":1}' } }] },
    { tool_calls: [{ index: 0, function: { arguments: null } }] },
  ]);
  const responsesBody = responses([
    { type: "response.output_text.delta", delta: ["a"] },
    { type: "response.output_text.delta", delta: "ok" },
    { type: "response.refusal.delta", delta: { x: 1 } },
    { type: "response.reasoning_summary_text.delta", item_id: "rs", delta: 5 },
    functionCall({ arguments: "" }),
    { type: "response.function_call_arguments.delta", item_id: "fc_1", delta: '{"a":1}' },
    { type: "response.function_call_arguments.delta", item_id: "fc_1", delta: { b: 2 } },
    {
      type: "response.output_item.done",
      item: { type: "reasoning", id: "rs", summary: "no list" },
    },
  ]);
  const anthropicBody = anthropic([
    { type: "content_block_start", index: 0, content_block: { type: "text", text: ["a"] } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: { x: 1 } } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } },
    toolUse({ id: "c1" }, 1),
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"a":1}' },
    },
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: { b: 2 } },
    },
  ]);
  for (
    const [api, body] of [["openai", chatBody], ["openai-responses", responsesBody], [
      "anthropic",
      anthropicBody,
    ]] as const
  ) {
    const events = await reply(api, body);
    for (const event of events) {
      if (event.type === "text_delta" || event.type === "thinking_delta") {
        assert.equal(typeof event.text, "string", `${api}: ${JSON.stringify(event)}`);
      }
    }
    const message = done(events).message;
    assert.equal(message.content, "ok", api);
    assert.equal(message.toolCalls?.[0].arguments, '{"a":1}', api);
    for (const part of message.thinking ?? []) assert.equal(typeof part.text, "string", api);
  }
});

Deno.test("createWireProvider() keeps only token counts that are non-negative integers, in every API", async () => {
  const events = {
    openai: await reply(
      "openai",
      chat([{ content: "ok" }], "stop", {
        prompt_tokens: -5,
        completion_tokens: 1.5,
        prompt_tokens_details: { cached_tokens: "7" },
        completion_tokens_details: { reasoning_tokens: 3 },
      }),
    ),
    responses: await reply(
      "openai-responses",
      responses([], {
        input_tokens: "10",
        output_tokens: 4,
        input_tokens_details: { cached_tokens: -1 },
        output_tokens_details: { reasoning_tokens: 1e300 },
      }),
    ),
    anthropic: await reply(
      "anthropic",
      anthropic([], "end_turn", {
        input_tokens: -100,
        output_tokens: 2.5,
        cache_read_input_tokens: [1],
      }),
    ),
  };
  // The reasoning tokens are part of the output, which counts as 0: so do they.
  assert.deepEqual(done(events.openai).usage, {
    inputTokens: 0,
    outputTokens: 0,
    cachedTokens: 0,
    reasoningTokens: 0,
  });
  assert.deepEqual(done(events.responses).usage, {
    inputTokens: 0,
    outputTokens: 4,
    cachedTokens: 0,
    reasoningTokens: 0,
  });
  // message_start's valid counts stand; message_delta's invalid ones do not replace them.
  assert.deepEqual(done(events.anthropic).usage, {
    inputTokens: 5,
    outputTokens: 1,
    cachedTokens: 0,
    reasoningTokens: 0,
    cacheWriteTokens: 0,
  });
});

Deno.test("createWireProvider() gives two calls of one reply that share an id distinct ids, in every API", async () => {
  const cases: [Api, string][] = [
    [
      "openai",
      chat([{
        tool_calls: [
          { index: 0, id: "c", function: { name: "bash", arguments: "{}" } },
          { index: 1, id: "c", function: { name: "bash", arguments: "{}" } },
          { index: 2, id: "c_2", function: { name: "bash", arguments: "{}" } },
        ],
      }]),
    ],
    [
      "openai-responses",
      responses([
        functionCall({ id: "fc_1", call_id: "c" }),
        { ...functionCall({ id: "fc_2", call_id: "c" }), output_index: 1 },
        { ...functionCall({ id: "fc_3", call_id: "c_2" }), output_index: 2 },
      ]),
    ],
    [
      "anthropic",
      anthropic([toolUse({ id: "c" }, 0), toolUse({ id: "c" }, 1), toolUse({ id: "c_2" }, 2)]),
    ],
  ];
  for (const [api, body] of cases) {
    const calls = done(await reply(api, body)).message.toolCalls ?? [];
    assert.deepEqual(calls.map((call) => call.id), ["c", "c_2", "c_2_2"], api);
  }
});

Deno.test("uniqueCallIds() names a call without an id by its position and keeps distinct ids as they are", () => {
  const calls = uniqueCallIds([
    { id: "", name: "a", arguments: "{}" },
    { id: "call_0", name: "b", arguments: "{}" },
    { id: "x", name: "c", arguments: "{}" },
  ]);
  assert.deepEqual(calls.map((call) => call.id), ["call_0", "call_0_2", "x"]);
});

Deno.test("ResponsesSocketPool.stream() checks the fields of events on the socket as over HTTP", async () => {
  const answers = [
    [functionCall({ arguments: { command: "ls" } })],
    [functionCall({ name: ["bash"] })],
  ];
  let round = 0;
  const accept = (socket: WebSocket) =>
    socket.addEventListener("message", () => {
      const events = answers[round++] ?? [];
      for (const event of events) socket.send(JSON.stringify(event));
      socket.send(JSON.stringify({ type: "response.completed", response: { id: `r${round}` } }));
    });
  const overHttp = async function* (): AsyncGenerator<StreamEvent> {
    yield* [];
    throw new Error("the request went over HTTP");
  };
  await withSocketPool(accept, { requestTimeoutMs: 10_000, idleTimeoutMs: 5_000 }, async (pool) => {
    const request = { ...REQUEST, cacheKey: "k" };
    const first = await streamOverSocket(pool, overHttp, { request });
    assertStringCalls(first);
    assert.equal(done(first).message.toolCalls?.[0].arguments, '{"command":"ls"}');
    const second = await streamOverSocket(pool, overHttp, { request });
    assert.match(lastError(second).message, /tool call name \["bash"\] is not a string/);
  });
});

Deno.test("runTurn() runs a Responses tool call whose arguments came as an object and goes on to the next round", async () => {
  const commands: string[] = [];
  const bash = defineTool({
    name: "bash",
    description: "runs a command (a stand-in that records it)",
    parameters: z.strictObject({ command: z.string() }),
    readOnly: false,
    runsIn: "host",
    paths: () => [],
    execute: (args) => {
      commands.push(args.command);
      return Promise.resolve({ output: "x" });
    },
  });
  await withStreams([
    responses([functionCall({ arguments: { command: "echo x" } })]),
    responses([{ type: "response.output_text.delta", delta: "done" }]),
  ], async (baseUrl) => {
    const result = await runTurn({
      messages: [{ role: "user", content: "run it" }],
      provider: provider("openai-responses", baseUrl),
      model: "any",
      tools: new ToolRegistry([bash]),
      workspace: "/nonexistent",
      emit: () => {},
    });
    assert.equal(result.exitReason, "COMPLETED", result.error);
    assert.equal(result.text, "done");
    assert.deepEqual(commands, ["echo x"]);
  });
});
