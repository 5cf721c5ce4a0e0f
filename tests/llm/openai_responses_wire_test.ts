import assert from "node:assert/strict";
import {
  ResponsesStreamState,
  toResponsesRequestBody,
} from "../../src/llm/openai_responses_wire.ts";
import type { StreamEvent } from "../../src/llm/types.ts";

function feed(state: ResponsesStreamState, events: unknown[]): StreamEvent[] {
  return events.flatMap((event) => state.apply(JSON.stringify(event)));
}

const COMPLETED = { type: "response.completed", response: { status: "completed" } };

Deno.test("toResponsesRequestBody() sends back only this API's reasoning with id and content", () => {
  const body = toResponsesRequestBody({
    model: "m",
    messages: [{
      role: "assistant",
      content: "",
      thinking: [
        { api: "openai", text: "chat reasoning", id: "rs_other", data: "enc-other" },
        { api: "anthropic", text: "claude", signature: "sig", data: "redacted" },
        { api: "openai-responses", text: "no id", data: "enc-x" },
        { api: "openai-responses", text: "", id: "rs_1", data: "enc-1" },
        { api: "openai-responses", text: "kept", id: "rs_2", data: "enc-2" },
      ],
      toolCalls: [{ id: "call_1", name: "ls", arguments: "{}" }],
    }],
    tools: [],
  });
  assert.deepEqual(body.input, [
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "enc-1" },
    {
      type: "reasoning",
      id: "rs_2",
      summary: [{ type: "summary_text", text: "kept" }],
      encrypted_content: "enc-2",
    },
    { type: "function_call", call_id: "call_1", name: "ls", arguments: "{}" },
  ]);
});

Deno.test("toResponsesRequestBody() drops reasoning that has an id but no encrypted content", () => {
  const body = toResponsesRequestBody({
    model: "m",
    messages: [{
      role: "assistant",
      content: "hi",
      thinking: [{ api: "openai-responses", text: "t", id: "rs_1" }],
    }],
    tools: [],
  });
  assert.deepEqual(body.input, [
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] },
  ]);
});

Deno.test("ResponsesStreamState.apply() lets a call's final arguments win over its deltas", () => {
  const state = new ResponsesStreamState();
  const events = feed(state, [
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "ls", arguments: "" },
    },
    {
      type: "response.function_call_arguments.delta",
      item_id: "fc_1",
      output_index: 0,
      delta: "{",
    },
    {
      type: "response.output_item.done",
      output_index: 0,
      item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "ls", arguments: "{}" },
    },
    COMPLETED,
  ]);
  assert.deepEqual(events, [
    { type: "tool_call_delta", index: 0, id: "call_1", name: "ls" },
    { type: "tool_call_delta", index: 0 },
  ]);
  const end = state.finish();
  assert.equal(end.type, "done");
  if (end.type === "done") {
    assert.deepEqual(end.message.toolCalls, [{ id: "call_1", name: "ls", arguments: "{}" }]);
    assert.equal(end.finishReason, "tool_calls");
  }
});

Deno.test("ResponsesStreamState.apply() finds a call by output index when item_id is missing", () => {
  const state = new ResponsesStreamState();
  feed(state, [
    {
      type: "response.output_item.added",
      output_index: 3,
      item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "ls" },
    },
    { type: "response.function_call_arguments.delta", output_index: 3, delta: '{"a":1}' },
    COMPLETED,
  ]);
  const end = state.finish();
  assert.equal(end.type === "done" && end.message.toolCalls?.[0].arguments, '{"a":1}');
});

Deno.test("ResponsesStreamState.apply() turns an error event into a final stream error", () => {
  const state = new ResponsesStreamState(["sk-secret-1234"]);
  assert.deepEqual(
    state.apply(
      JSON.stringify({ type: "error", code: "rate_limit_exceeded", message: "Slow down" }),
    ),
    [{
      type: "error",
      kind: "client",
      message: "Model API stream error: Slow down",
      retryable: true,
    }],
  );
  assert.equal(state.ended, true);
  assert.deepEqual(
    new ResponsesStreamState(["sk-secret-1234"]).apply(
      JSON.stringify({ type: "error", code: "invalid_prompt", message: "Bad sk-secret-1234" }),
    ),
    [{ type: "error", kind: "client", message: "Model API stream error: Bad [redacted]" }],
  );
});

Deno.test("ResponsesStreamState.finish() fails retryably when no terminal event arrived", () => {
  const state = new ResponsesStreamState();
  feed(state, [{ type: "response.output_text.delta", delta: "par" }]);
  assert.equal(state.complete, false);
  assert.equal(state.ended, false);
  assert.deepEqual(state.finish(), {
    type: "error",
    kind: "client",
    message: "Model API stream ended early: no finish reason",
    retryable: true,
  });
});

for (
  const [reason, finishReason] of [["content_filter", "refusal"], ["a_reason_added_later", "other"]]
) {
  Deno.test(`ResponsesStreamState.apply() maps an incomplete response for ${reason} to ${finishReason}, naming it`, () => {
    const state = new ResponsesStreamState();
    feed(state, [{
      type: "response.incomplete",
      response: {
        status: "incomplete",
        incomplete_details: { reason },
        usage: { input_tokens: 5, output_tokens: 2 },
      },
    }]);
    assert.equal(state.complete, true);
    assert.equal(state.ended, true);
    assert.deepEqual(state.finish(), {
      type: "done",
      message: { role: "assistant", content: "" },
      finishReason,
      stopReason: reason,
      usage: { inputTokens: 5, outputTokens: 2, cachedTokens: 0, reasoningTokens: 0 },
    });
  });
}

Deno.test("ResponsesStreamState.apply() keeps raw reasoning text of an item that never finished", () => {
  const state = new ResponsesStreamState();
  const events = feed(state, [
    { type: "response.reasoning_text.delta", item_id: "rs_9", delta: "hmm" },
    COMPLETED,
  ]);
  assert.deepEqual(events, [{ type: "thinking_delta", text: "hmm" }]);
  const end = state.finish();
  assert.deepEqual(end.type === "done" && end.message.thinking, [
    { api: "openai-responses", text: "hmm" },
  ]);
});

Deno.test("ResponsesStreamState.apply() rejects a payload that is not JSON", () => {
  assert.deepEqual(new ResponsesStreamState().apply("{oops"), [{
    type: "error",
    kind: "client",
    message: 'Cannot parse model API stream event "{oops": invalid JSON',
  }]);
});

Deno.test("toResponsesRequestBody() sends arguments that are not one JSON object back as {}", () => {
  const body = toResponsesRequestBody({
    model: "m",
    messages: [{
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "call_1", name: "bash", arguments: '{"command": "ls"' },
        { id: "call_2", name: "bash", arguments: '{"command": "ls"}' },
      ],
    }],
    tools: [],
  });
  assert.deepEqual(body.input, [
    { type: "function_call", call_id: "call_1", name: "bash", arguments: "{}" },
    { type: "function_call", call_id: "call_2", name: "bash", arguments: '{"command": "ls"}' },
  ]);
});

Deno.test("ResponsesStreamState takes a call_id that arrives only when the item is done", () => {
  const state = new ResponsesStreamState();
  feed(state, [
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { id: "fc_77", type: "function_call", arguments: "", name: "bash" },
    },
    {
      type: "response.output_item.done",
      output_index: 0,
      item: {
        id: "fc_77",
        type: "function_call",
        arguments: "{}",
        name: "bash",
        call_id: "call_REAL",
      },
    },
    COMPLETED,
  ]);
  const final = state.finish();
  assert.ok(final.type === "done");
  assert.deepEqual(final.message.toolCalls, [{ id: "call_REAL", name: "bash", arguments: "{}" }]);
});
