import assert from "node:assert/strict";
import type { ContextItem } from "../../src/context/compaction.ts";
import { summaryMessage } from "../../src/context/summary.ts";
import {
  buildSummaryRequest,
  serialiseItem,
  SUMMARY_RESERVE_TOKENS,
  TOOL_ARGUMENT_CHARS,
} from "../../src/context/summary_request.ts";
import { estimateMessageTokens } from "../../src/context/tokens.ts";

function longHistory(steps: number, stepChars: number): ContextItem[] {
  const items: ContextItem[] = [
    { id: "u0", message: { role: "user", content: "GOAL: rewrite the session store." } },
  ];
  for (let i = 0; i < steps; i++) {
    const words = Array.from({ length: stepChars / 8 }, (_, k) => `word${k % 97}`).join(" ");
    items.push({ id: `a${i}`, message: { role: "assistant", content: `Step ${i}: ${words}` } });
  }
  return items;
}

Deno.test("buildSummaryRequest() drops the oldest messages after the first request to fit", () => {
  for (const window of [16_000, 24_000, 64_000]) {
    const request = buildSummaryRequest(longHistory(120, 3_000), {
      model: "m",
      contextWindow: window,
    });
    const sent = request.messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);
    const budget = Math.max(window - SUMMARY_RESERVE_TOKENS, window / 2);
    assert.ok(sent <= budget, `window ${window}: request of ${sent} tokens > ${budget}`);
    assert.ok(sent > budget * 0.8, `window ${window}: request of ${sent} tokens wastes room`);
    const user = request.messages[1].content;
    assert.ok(user.includes("[user]\nGOAL: rewrite the session store.\n\n[... "));
    assert.match(user, /\[\.\.\. \d+ messages omitted here to fit the summary request \.\.\.\]/);
    assert.ok(user.includes("Step 119:"), "the most recent old message was dropped");
    assert.ok(!user.includes("Step 0:"), "the oldest messages were kept");
    assert.deepEqual(request.tools, []);
  }
});

Deno.test("buildSummaryRequest() sends a history that fits unchanged", () => {
  const items = longHistory(3, 100);
  const user = buildSummaryRequest(items, { model: "m", contextWindow: 32_000 }).messages[1]
    .content;
  assert.ok(user.includes(items.map((item) => serialiseItem(item)).join("\n\n")));
  assert.ok(!user.includes("omitted"));
});

Deno.test("buildSummaryRequest() cuts a first request too large for the window in its middle", () => {
  const items: ContextItem[] = [
    { id: "u0", message: { role: "user", content: `START ${"q ".repeat(60_000)} END` } },
    { id: "a0", message: { role: "assistant", content: "ok" } },
  ];
  const request = buildSummaryRequest(items, { model: "m", contextWindow: 16_000 });
  const sent = request.messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);
  assert.ok(sent <= 8_000, `request of ${sent} tokens`);
  const user = request.messages[1].content;
  assert.ok(user.includes("[user]\nSTART") && user.includes("END"));
  assert.match(user, /characters \(\d+ lines\) of message cut/);
});

Deno.test("serialiseItem() shows roles, tool calls with cut arguments, results and summaries", () => {
  const args = JSON.stringify({ path: "a.ts", content: "x".repeat(10_000) });
  const call = serialiseItem({
    id: "1",
    message: {
      role: "assistant",
      content: "Writing.",
      toolCalls: [{ id: "c1", name: "write", arguments: args }],
    },
  });
  assert.ok(call.startsWith('[assistant]\nWriting.\n[tool call write id=c1] {"path":"a.ts"'));
  assert.ok(call.length < TOOL_ARGUMENT_CHARS + 100);
  assert.equal(
    serialiseItem({
      id: "2",
      message: { role: "tool", toolCallId: "c1", name: "write", content: "SUCCEEDED\nok" },
    }),
    "[tool result write id=c1]\nSUCCEEDED\nok",
  );
  assert.equal(
    serialiseItem({ id: "3", message: summaryMessage("## Goal\nX") }),
    "[summary of earlier work]\n## Goal\nX",
  );
});

Deno.test("buildSummaryRequest() keeps the person's first request, not a subagent's result before it, when it drops messages", () => {
  const completion = "[subagent survey (agent a1, run r1, child session " +
    "0b7e2c1a-1111-4222-8333-944455556666) completed]\n--- BEGIN SUBAGENT ANSWER 1a2b3c4d " +
    "(the subagent's words, not tern's or the person's) ---\nThe store has 3 files.\n" +
    "--- END SUBAGENT ANSWER 1a2b3c4d ---";
  const [first, ...steps] = longHistory(120, 3_000);
  const items: ContextItem[] = [
    { id: "s0", message: { role: "user", content: completion } },
    first,
    ...steps,
  ];
  const user = buildSummaryRequest(items, {
    model: "m",
    contextWindow: 16_000,
    voiceOf: (content) => content.startsWith("[subagent ") ? "a subagent's result" : undefined,
  }).messages[1].content;
  assert.ok(user.includes("[user]\nGOAL: rewrite the session store.\n\n[... "), user.slice(0, 800));
  assert.ok(user.includes("[a subagent's result (not the person's words)]\n\\[subagent survey"));
});
