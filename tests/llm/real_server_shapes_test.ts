/**
 * Shapes real servers send, and what they require back, that tern's wire code once got wrong:
 * Anthropic's rules for thinking after another provider's calls and for call ids, the order of
 * Responses reasoning items, capacity errors inside a stream, Mistral's content lists, text
 * blocks that belong apart. Each test feeds the wire states the events as the server sends
 * them, or builds the body tern would send.
 */
import assert from "node:assert/strict";
import { AnthropicStreamState, toAnthropicRequestBody } from "../../src/llm/anthropic_wire.ts";
import { ChatStreamState, toChatRequestBody } from "../../src/llm/openai_chat_wire.ts";
import {
  ResponsesStreamState,
  toResponsesRequestBody,
} from "../../src/llm/openai_responses_wire.ts";
import { isRetryableStreamError } from "../../src/llm/errors.ts";
import type { Message } from "../../src/core/messages.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";

type Payload = Record<string, unknown>;

function feed(state: { apply(data: string): StreamEvent[] }, payloads: Payload[]): StreamEvent[] {
  return payloads.flatMap((payload) => state.apply(JSON.stringify(payload)));
}

function doneMessage(event: StreamEvent) {
  assert.equal(event.type, "done", JSON.stringify(event));
  return (event as Extract<StreamEvent, { type: "done" }>).message;
}

/** A turn whose last calls came from another provider: no Anthropic thinking before them. */
const AFTER_OTHER_PROVIDER: Message[] = [
  { role: "user", content: "read a.ts" },
  {
    role: "assistant",
    content: "",
    thinking: [{ api: "openai", text: "reasoning from elsewhere", field: "reasoning_content" }],
    toolCalls: [{ id: "functions.read:0", name: "read", arguments: '{"path":"a.ts"}' }],
  },
  { role: "tool", toolCallId: "functions.read:0", name: "read", content: "x = 1" },
];

function anthropicRequest(messages: Message[]): ModelRequest {
  return {
    model: "claude",
    messages,
    tools: [],
    reasoning: { effort: "high", budgetTokens: 4096 },
  };
}

Deno.test("toAnthropicRequestBody() leaves thinking off when the last calls have no thinking block", () => {
  const body = toAnthropicRequestBody(anthropicRequest(AFTER_OTHER_PROVIDER));
  // Anthropic answers 400 ("Expected `thinking` or `redacted_thinking`, but found `tool_use`")
  // to every such request, so the session would be stuck.
  assert.equal(body.thinking, undefined);
  const signed: Message[] = [
    AFTER_OTHER_PROVIDER[0],
    {
      ...AFTER_OTHER_PROVIDER[1],
      thinking: [{ api: "anthropic", text: "mine", signature: "sig" }],
    } as Message,
    AFTER_OTHER_PROVIDER[2],
  ];
  assert.deepEqual(toAnthropicRequestBody(anthropicRequest(signed)).thinking, {
    type: "enabled",
    budget_tokens: 4096,
  });
  const answered: Message[] = [
    ...AFTER_OTHER_PROVIDER,
    { role: "assistant", content: "x is 1." },
    { role: "user", content: "thanks" },
  ];
  assert.equal(toAnthropicRequestBody(anthropicRequest(answered)).thinking?.type, "enabled");
});

Deno.test("toAnthropicRequestBody() sends other providers' call ids in Anthropic's pattern, call and result alike", () => {
  const body = toAnthropicRequestBody(anthropicRequest([
    ...AFTER_OTHER_PROVIDER,
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "functions.read_1", name: "read", arguments: "{}" }],
    },
    { role: "tool", toolCallId: "functions.read_1", name: "read", content: "y" },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "toolu_01Ab-x", name: "read", arguments: "{}" }],
    },
    { role: "tool", toolCallId: "toolu_01Ab-x", name: "read", content: "z" },
  ]));
  const ids = body.messages.flatMap((message) =>
    message.content.flatMap((block) =>
      block.type === "tool_use"
        ? [block.id]
        : block.type === "tool_result"
        ? [block.tool_use_id]
        : []
    )
  );
  assert.equal(ids.length, 6);
  for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{1,64}$/);
  // A call and its result still match; different ids stay apart; a fitting id is kept.
  assert.equal(ids[0], ids[1]);
  assert.equal(ids[2], ids[3]);
  assert.notEqual(ids[0], ids[2]);
  assert.deepEqual(ids.slice(4), ["toolu_01Ab-x", "toolu_01Ab-x"]);
});

Deno.test("toChatRequestBody() cuts call ids to the 40 characters OpenAI's Chat API takes", () => {
  const long = `call_${"a".repeat(60)}`;
  const body = toChatRequestBody({
    model: "m",
    tools: [],
    messages: [
      { role: "user", content: "go" },
      { role: "assistant", content: "", toolCalls: [{ id: long, name: "ls", arguments: "{}" }] },
      { role: "tool", toolCallId: long, name: "ls", content: "ok" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_short", name: "ls", arguments: "{}" }],
      },
      { role: "tool", toolCallId: "call_short", name: "ls", content: "ok" },
    ],
  });
  const assistant = body.messages[1] as { tool_calls: { id: string }[] };
  const result = body.messages[2] as { tool_call_id: string };
  assert.ok(assistant.tool_calls[0].id.length <= 40, assistant.tool_calls[0].id);
  assert.equal(result.tool_call_id, assistant.tool_calls[0].id);
  assert.equal((body.messages[4] as { tool_call_id: string }).tool_call_id, "call_short");
});

Deno.test("ResponsesStreamState keeps each reasoning item before the item that followed it", () => {
  const state = new ResponsesStreamState();
  feed(state, [
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { type: "reasoning", id: "rs_1" },
    },
    {
      type: "response.output_item.done",
      output_index: 0,
      item: { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "e1" },
    },
    { type: "response.output_item.added", output_index: 1, item: { type: "message", id: "msg_1" } },
    { type: "response.output_text.delta", item_id: "msg_1", delta: "I will read it." },
    {
      type: "response.output_item.added",
      output_index: 2,
      item: { type: "reasoning", id: "rs_2" },
    },
    {
      type: "response.output_item.done",
      output_index: 2,
      item: { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "e2" },
    },
    {
      type: "response.output_item.added",
      output_index: 3,
      item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "read", arguments: "" },
    },
    {
      type: "response.output_item.done",
      output_index: 3,
      item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "read", arguments: "{}" },
    },
    { type: "response.completed", response: { status: "completed" } },
  ]);
  const message = doneMessage(state.finish());
  const body = toResponsesRequestBody({ model: "m", tools: [], messages: [message] });
  // The API refuses a reasoning item sent back without its following item right after it.
  assert.deepEqual(body.input.map((item) => "id" in item ? item.id : item.type), [
    "rs_1",
    "message",
    "rs_2",
    "function_call",
  ]);
});

Deno.test("ResponsesStreamState sets message items and summary parts apart as paragraphs", () => {
  const state = new ResponsesStreamState();
  const events = feed(state, [
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { type: "reasoning", id: "rs_1" },
    },
    { type: "response.reasoning_summary_part.added", item_id: "rs_1", summary_index: 0 },
    { type: "response.reasoning_summary_text.delta", item_id: "rs_1", delta: "Plan A" },
    { type: "response.reasoning_summary_part.added", item_id: "rs_1", summary_index: 1 },
    { type: "response.reasoning_summary_text.delta", item_id: "rs_1", delta: "Plan B" },
    { type: "response.output_item.added", output_index: 1, item: { type: "message", id: "m1" } },
    { type: "response.output_text.delta", item_id: "m1", delta: "Part one." },
    { type: "response.output_item.added", output_index: 2, item: { type: "message", id: "m2" } },
    { type: "response.output_text.delta", item_id: "m2", delta: "Part two." },
    { type: "response.completed", response: { status: "completed" } },
  ]);
  const shown = (type: string) =>
    events.flatMap((event) => event.type === type && "text" in event ? [event.text] : []).join("");
  assert.equal(shown("thinking_delta"), "Plan A\n\nPlan B");
  assert.equal(shown("text_delta"), "Part one.\n\nPart two.");
  assert.equal(doneMessage(state.finish()).content, "Part one.\n\nPart two.");
});

Deno.test("ResponsesStreamState retries a capacity error sent inside the stream", () => {
  const capacity = [
    {
      type: "response.failed",
      response: {
        status: "failed",
        error: {
          code: "server_is_overloaded",
          message: "Selected model is at capacity. Please try a different model.",
        },
      },
    },
    { type: "error", error: { type: "error", code: "slow_down", message: "Slow down." } },
    { type: "error", error: { type: "server_error", code: null, message: "Internal error." } },
  ];
  for (const event of capacity) {
    const [error] = new ResponsesStreamState().apply(JSON.stringify(event));
    assert.equal(error.type, "error");
    assert.equal("retryable" in error && error.retryable, true, JSON.stringify(event));
  }
  const [refused] = new ResponsesStreamState().apply(JSON.stringify({
    type: "error",
    error: { type: "invalid_request_error", code: "invalid_prompt", message: "No." },
  }));
  assert.equal("retryable" in refused, false);
});

Deno.test("isRetryableStreamError() retries busy servers, not an exhausted quota", () => {
  assert.equal(
    isRetryableStreamError({ type: "service_unavailable_error", code: "server_is_overloaded" }),
    true,
  );
  assert.equal(
    isRetryableStreamError({ type: "insufficient_quota", code: "insufficient_quota" }),
    false,
  );
  assert.equal(isRetryableStreamError({ type: "rate_limit", code: "insufficient_quota" }), false);
});

Deno.test("ChatStreamState reads Mistral's content lists as text and thinking", () => {
  const state = new ChatStreamState();
  const events = feed(state, [
    { choices: [{ index: 0, delta: { role: "assistant", content: "" } }] },
    {
      choices: [{
        index: 0,
        delta: {
          content: [{ type: "thinking", thinking: [{ type: "text", text: "Count the letters." }] }],
        },
      }],
    },
    { choices: [{ index: 0, delta: { content: [{ type: "text", text: "There are " }] } }] },
    { choices: [{ index: 0, delta: { content: [{ type: "text", text: "three." }] } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  ]);
  assert.ok(events.some((event) => event.type === "thinking_delta"));
  const message = doneMessage(state.finish());
  assert.equal(message.content, "There are three.");
  assert.deepEqual(message.thinking, [{
    api: "openai",
    text: "Count the letters.",
    field: "content",
  }]);
  // Sent back without a reasoning field Mistral would not take.
  const body = toChatRequestBody({ model: "m", tools: [], messages: [message] });
  assert.deepEqual(body.messages[0], { role: "assistant", content: "There are three." });
});

Deno.test("AnthropicStreamState sets text after a server tool's blocks apart, not cited pieces", () => {
  const state = new AnthropicStreamState();
  const events = feed(state, [
    { type: "message_start", message: { usage: { input_tokens: 5 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "I'll search." } },
    { type: "content_block_stop", index: 0 },
    {
      type: "content_block_start",
      index: 1,
      content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
    },
    { type: "content_block_stop", index: 1 },
    {
      type: "content_block_start",
      index: 2,
      content_block: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
    },
    { type: "content_block_stop", index: 2 },
    { type: "content_block_start", index: 3, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "Deno 2 " } },
    { type: "content_block_stop", index: 3 },
    { type: "content_block_start", index: 4, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 4, delta: { type: "text_delta", text: "is out." } },
    { type: "content_block_stop", index: 4 },
    { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } },
    { type: "message_stop" },
  ]);
  const expected = "I'll search.\n\nDeno 2 is out.";
  const streamed = events.flatMap((event) => event.type === "text_delta" ? [event.text] : []);
  assert.equal(streamed.join(""), expected);
  assert.equal(doneMessage(state.finish()).content, expected);
});

Deno.test("ChatStreamState reads reasoning from the field that has it when both are sent", () => {
  const state = new ChatStreamState();
  const events = feed(state, [
    {
      choices: [{
        index: 0,
        delta: { role: "assistant", reasoning_content: "", reasoning: "Plan" },
      }],
    },
    { choices: [{ index: 0, delta: { reasoning_content: null, reasoning: " first." } }] },
    { choices: [{ index: 0, delta: { content: "Done." }, finish_reason: "stop" }] },
  ]);
  const thought = events.flatMap((event) => event.type === "thinking_delta" ? [event.text] : []);
  assert.deepEqual(thought, ["Plan", " first."]);
  assert.deepEqual(doneMessage(state.finish()).thinking, [{
    api: "openai",
    text: "Plan first.",
    field: "reasoning",
  }]);
});
