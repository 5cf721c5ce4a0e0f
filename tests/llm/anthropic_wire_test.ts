import assert from "node:assert/strict";
import {
  AnthropicStreamState,
  toAnthropicFinishReason,
  toAnthropicRequestBody,
} from "../../src/llm/anthropic_wire.ts";
import type { StreamEvent } from "../../src/llm/types.ts";

/** Feeds payloads (objects are JSON-encoded) and returns every event plus the final one. */
function play(payloads: (string | Record<string, unknown>)[], secrets: string[] = []) {
  const state = new AnthropicStreamState(secrets);
  const events: StreamEvent[] = [];
  for (const payload of payloads) {
    events.push(...state.apply(typeof payload === "string" ? payload : JSON.stringify(payload)));
  }
  return { state, events, final: state.finish() };
}

const STOP = [
  { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } },
  { type: "message_stop" },
];

Deno.test("toAnthropicRequestBody() sends invalid tool arguments as an empty object", () => {
  const body = toAnthropicRequestBody({
    model: "m",
    messages: [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "t1", name: "a", arguments: "{broken" },
          { id: "t2", name: "b", arguments: "[1,2]" },
        ],
      },
    ],
    tools: [],
  });
  assert.deepEqual(body.messages[1].content, [
    { type: "tool_use", id: "t1", name: "a", input: {} },
    { type: "tool_use", id: "t2", name: "b", input: {} },
  ]);
  assert.equal(body.tools, undefined);
  assert.equal(body.system, undefined);
});

Deno.test("toAnthropicRequestBody() drops an empty assistant and keeps user turns merged", () => {
  const body = toAnthropicRequestBody({
    model: "m",
    messages: [
      { role: "user", content: "one" },
      { role: "assistant", content: "", thinking: [{ api: "anthropic", text: "", data: "x" }] },
      { role: "user", content: "two" },
    ],
    tools: [],
  });
  assert.deepEqual(body.messages, [{
    role: "user",
    content: [
      { type: "text", text: "one" },
      { type: "text", text: "two", cache_control: { type: "ephemeral" } },
    ],
  }]);
});

Deno.test("toAnthropicRequestBody() sends redacted thinking back and drops unsigned thinking", () => {
  const body = toAnthropicRequestBody({
    model: "m",
    messages: [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "Sure.",
        thinking: [
          { api: "anthropic", text: "", data: "opaque" },
          { api: "anthropic", text: "cut off before its signature" },
          { api: "openai-responses", text: "", data: "enc", id: "rs_1" },
        ],
      },
    ],
    tools: [],
  });
  assert.deepEqual(body.messages[1].content, [
    { type: "redacted_thinking", data: "opaque" },
    { type: "text", text: "Sure." },
  ]);
});

Deno.test("toAnthropicRequestBody() sends no thinking below the 1,024-token minimum", () => {
  const body = toAnthropicRequestBody({
    model: "m",
    messages: [{ role: "user", content: "go" }],
    tools: [],
    maxTokens: 100,
    temperature: 0.5,
    reasoning: { effort: "low", budgetTokens: 0 },
  });
  assert.equal(body.thinking, undefined);
  assert.equal(body.max_tokens, 100);
  assert.equal(body.temperature, 0.5);
});

Deno.test("toAnthropicRequestBody() keeps a max_tokens already above budget + 1,024", () => {
  const body = toAnthropicRequestBody({
    model: "m",
    messages: [{ role: "user", content: "go" }],
    tools: [],
    maxTokens: 64_000,
    reasoning: { effort: "high", budgetTokens: 32_000 },
  });
  assert.equal(body.max_tokens, 64_000);
  assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 32_000 });
});

Deno.test("toAnthropicFinishReason() maps Anthropic stop reasons", () => {
  assert.equal(toAnthropicFinishReason("end_turn"), "stop");
  assert.equal(toAnthropicFinishReason("stop_sequence"), "stop");
  assert.equal(toAnthropicFinishReason("tool_use"), "tool_calls");
  assert.equal(toAnthropicFinishReason("max_tokens"), "length");
  assert.equal(toAnthropicFinishReason("model_context_window_exceeded"), "length");
  assert.equal(toAnthropicFinishReason("refusal"), "refusal");
  assert.equal(toAnthropicFinishReason("pause_turn"), "pause");
  assert.equal(toAnthropicFinishReason("a_reason_added_later"), "other");
});

Deno.test("AnthropicStreamState gives a tool call without input deltas its start input", () => {
  const { events, final } = play([
    { type: "message_start", message: { usage: { input_tokens: 10, output_tokens: 1 } } },
    {
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: "t1", name: "list", input: {} },
    },
    {
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: "" },
    },
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } },
    { type: "message_stop" },
  ]);
  assert.deepEqual(events, [{ type: "tool_call_delta", index: 0, id: "t1", name: "list" }]);
  assert.equal(final.type, "done");
  if (final.type !== "done") return;
  assert.deepEqual(final.message.toolCalls, [{ id: "t1", name: "list", arguments: "{}" }]);
  assert.equal(final.finishReason, "tool_calls");
  assert.deepEqual(final.usage, {
    inputTokens: 10,
    outputTokens: 9,
    cachedTokens: 0,
    reasoningTokens: 0,
    cacheWriteTokens: 0,
  });
});

Deno.test("AnthropicStreamState takes input counts repeated in message_delta", () => {
  const { final } = play([
    { type: "message_start", message: { usage: { input_tokens: 0, output_tokens: 1 } } },
    { type: "ping" },
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: {
        input_tokens: 40,
        cache_read_input_tokens: 500,
        cache_creation_input_tokens: null,
        output_tokens: 7,
      },
    },
    { type: "message_stop" },
  ]);
  assert.equal(final.type, "done");
  if (final.type !== "done") return;
  assert.deepEqual(final.usage, {
    inputTokens: 540,
    outputTokens: 7,
    cachedTokens: 500,
    reasoningTokens: 0,
    cacheWriteTokens: 0,
  });
});

Deno.test("AnthropicStreamState keeps thinking and redacted thinking in order", () => {
  const { events, final, state } = play([
    { type: "message_start", message: { usage: { input_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Hm" } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "s1" } },
    {
      type: "content_block_start",
      index: 1,
      content_block: { type: "redacted_thinking", data: "opaque" },
    },
    { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "Hi" } },
    ...STOP,
  ]);
  assert.equal(state.ended, true);
  assert.deepEqual(events, [
    { type: "thinking_delta", text: "Hm" },
    { type: "text_delta", text: "Hi" },
  ]);
  assert.equal(final.type, "done");
  if (final.type !== "done") return;
  assert.deepEqual(final.message, {
    role: "assistant",
    content: "Hi",
    thinking: [
      { api: "anthropic", text: "Hm", signature: "s1" },
      { api: "anthropic", text: "", data: "opaque" },
    ],
  });
});

Deno.test("AnthropicStreamState reports an invalid request error as not retryable and redacted", () => {
  const { events } = play([
    {
      type: "error",
      error: { type: "invalid_request_error", message: "Bad key sk-ant-XYZ-1234 in request" },
    },
  ], ["sk-ant-XYZ-1234"]);
  assert.deepEqual(events, [{
    type: "error",
    kind: "client",
    message: "Model API stream error: Bad key [redacted] in request",
  }]);
});

Deno.test("AnthropicStreamState reports an api_error as retryable", () => {
  const { events } = play([{ type: "error", error: { type: "api_error", message: "Internal" } }]);
  assert.deepEqual(events, [{
    type: "error",
    kind: "client",
    message: "Model API stream error: Internal",
    retryable: true,
  }]);
});

Deno.test("AnthropicStreamState is incomplete until a stop reason arrives", () => {
  const { state, final } = play([
    { type: "message_start", message: { usage: { input_tokens: 1 } } },
    { type: "message_stop" },
  ]);
  assert.equal(state.complete, false);
  assert.deepEqual(final, {
    type: "error",
    kind: "client",
    message: "Model API stream ended early: no finish reason",
    retryable: true,
  });
  const after = play([STOP[0]]);
  assert.equal(after.state.complete, true);
  assert.equal(after.state.ended, false);
});
