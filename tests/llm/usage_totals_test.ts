/**
 * Token counts a server reports are kept consistent as each API defines them: in the OpenAI
 * APIs cached tokens are part of the input count and reasoning tokens part of the output count,
 * so neither may exceed its whole; Anthropic counts cache reads apart from `input_tokens`, so
 * there a cache read far above `input_tokens` is normal and kept.
 */
import assert from "node:assert/strict";
import { AnthropicStreamState } from "../../src/llm/anthropic_wire.ts";
import { ChatStreamState, toUsage } from "../../src/llm/openai_chat_wire.ts";
import { ResponsesStreamState } from "../../src/llm/openai_responses_wire.ts";
import type { StreamEvent } from "../../src/llm/types.ts";

/** The usage of the `done` event `state` ends with after `payloads`. */
function usageAfter(
  state: { apply(data: string): StreamEvent[]; finish(): StreamEvent },
  payloads: unknown[],
): unknown {
  for (const payload of payloads) state.apply(JSON.stringify(payload));
  const final = state.finish();
  assert.equal(final.type, "done", JSON.stringify(final));
  return final.type === "done" ? final.usage : undefined;
}

Deno.test("toUsage() keeps cached tokens within the prompt and reasoning within the completion", () => {
  assert.deepEqual(
    toUsage({
      prompt_tokens: 10,
      completion_tokens: 10,
      prompt_tokens_details: { cached_tokens: 1_000_000_000 },
      completion_tokens_details: { reasoning_tokens: 500 },
    }),
    { inputTokens: 10, outputTokens: 10, cachedTokens: 10, reasoningTokens: 10 },
  );
  // Counts within their wholes are kept as they came.
  assert.deepEqual(
    toUsage({
      prompt_tokens: 1000,
      completion_tokens: 50,
      prompt_tokens_details: { cached_tokens: 900 },
      completion_tokens_details: { reasoning_tokens: 30 },
    }),
    { inputTokens: 1000, outputTokens: 50, cachedTokens: 900, reasoningTokens: 30 },
  );
});

Deno.test("ChatStreamState reports the clamped usage of a usage chunk", () => {
  const usage = usageAfter(new ChatStreamState(), [
    { choices: [{ index: 0, delta: { content: "done" }, finish_reason: "stop" }] },
    {
      choices: [],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 10,
        total_tokens: 20,
        prompt_tokens_details: { cached_tokens: 1_000_000_000 },
      },
    },
  ]);
  assert.deepEqual(usage, {
    inputTokens: 10,
    outputTokens: 10,
    cachedTokens: 10,
    reasoningTokens: 0,
  });
});

Deno.test("ResponsesStreamState keeps cached tokens within the input and reasoning within the output", () => {
  const usage = usageAfter(new ResponsesStreamState(), [{
    type: "response.completed",
    response: {
      status: "completed",
      usage: {
        input_tokens: 10,
        output_tokens: 4,
        input_tokens_details: { cached_tokens: 2e12 },
        output_tokens_details: { reasoning_tokens: 99 },
      },
    },
  }]);
  assert.deepEqual(usage, {
    inputTokens: 10,
    outputTokens: 4,
    cachedTokens: 10,
    reasoningTokens: 4,
  });
});

Deno.test("AnthropicStreamState keeps a cache read above input_tokens: the input is their sum", () => {
  const usage = usageAfter(new AnthropicStreamState(), [
    {
      type: "message_start",
      message: {
        usage: {
          input_tokens: 10,
          cache_read_input_tokens: 50_000,
          cache_creation_input_tokens: 2_000,
          output_tokens: 1,
        },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hi" } },
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } },
    { type: "message_stop" },
  ]);
  assert.deepEqual(usage, {
    inputTokens: 52_010,
    outputTokens: 3,
    cachedTokens: 50_000,
    reasoningTokens: 0,
    cacheWriteTokens: 2_000,
  });
});
