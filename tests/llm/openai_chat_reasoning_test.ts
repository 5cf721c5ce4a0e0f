import assert from "node:assert/strict";
import { ReasoningDetails, reasoningToSendBack } from "../../src/llm/openai_chat_reasoning.ts";
import { toChatRequestBody } from "../../src/llm/openai_chat_wire.ts";

Deno.test("ReasoningDetails.add() merges pieces by index and keeps blocks in the order they began", () => {
  const details = new ReasoningDetails();
  details.add([{ type: "reasoning.text", text: "Step", index: 0, format: "f" }]);
  details.add([{ type: "reasoning.encrypted", data: "QUJD", index: 1, format: "f" }]);
  details.add([{ type: "reasoning.text", text: " one", index: 0, signature: null }]);
  details.add([{ type: "reasoning.text", text: "", signature: "sig", index: 0 }]);
  details.add("not a list");
  details.add([null, 3, { type: "reasoning.summary", summary: "In short" }]);
  assert.deepEqual(details.blocks, [
    { type: "reasoning.text", text: "Step one", index: 0, format: "f", signature: "sig" },
    { type: "reasoning.encrypted", data: "QUJD", index: 1, format: "f" },
    { type: "reasoning.summary", summary: "In short" },
  ]);
});

Deno.test("reasoningToSendBack() prefers blocks, sends reasoning_content text, and nothing else", () => {
  const blocks = [{ type: "reasoning.text", text: "t", index: 0 }];
  assert.deepEqual(
    reasoningToSendBack([{ api: "openai", text: "t", field: "reasoning", details: blocks }]),
    { reasoning_details: blocks },
  );
  assert.deepEqual(
    reasoningToSendBack([{ api: "openai", text: "why", field: "reasoning_content" }]),
    {
      reasoning_content: "why",
    },
  );
  assert.deepEqual(reasoningToSendBack([{ api: "openai", text: "why", field: "reasoning" }]), {});
  assert.deepEqual(reasoningToSendBack([{ api: "anthropic", text: "why", signature: "s" }]), {});
  assert.deepEqual(reasoningToSendBack(undefined), {});
});

Deno.test("toChatRequestBody() sends reasoning back with the assistant message it came with", () => {
  const body = toChatRequestBody({
    model: "deepseek-v4-pro",
    tools: [],
    messages: [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: "Hello.",
        thinking: [{ api: "openai", text: "Greet.", field: "reasoning_content" }],
      },
      { role: "user", content: "and now?" },
      { role: "assistant", content: "Still here.", thinking: [{ api: "anthropic", text: "x" }] },
    ],
  });
  assert.deepEqual(body.messages.slice(1), [
    { role: "assistant", content: "Hello.", reasoning_content: "Greet." },
    { role: "user", content: "and now?" },
    { role: "assistant", content: "Still here." },
  ]);
});
