/** compact() refuses a model summary that is too long for the window or frees nothing. */
import assert from "node:assert/strict";
import {
  compact,
  type CompactionSettings,
  type ContextItem,
  DEFAULT_COMPACTION,
  summaryLimit,
  summaryMessage,
} from "../../src/context/compaction.ts";
import { FALLBACK_SUMMARY_MAX_CHARS } from "../../src/context/fallback_summary.ts";
import { estimateMessageTokens } from "../../src/context/tokens.ts";
import type { Message } from "../../src/core/messages.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

const SETTINGS: CompactionSettings = {
  ...DEFAULT_COMPACTION,
  contextWindow: 32_000,
  keepRecentTokens: 500,
};

/** Three user turns; the first, with a tool output of `outputLines` lines, is the old part. */
function history(outputLines: number): ContextItem[] {
  const messages: Message[] = [
    { role: "user", content: "Count the lines of src/main.ts." },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "c1", name: "bash", arguments: '{"command":"wc -l src/main.ts"}' }],
    },
    {
      role: "tool",
      toolCallId: "c1",
      name: "bash",
      content: `SUCCEEDED\n${"42 src/main.ts\n".repeat(outputLines)}`,
    },
    { role: "assistant", content: "It has 42 lines." },
    { role: "user", content: "Now the docs." },
    { role: "assistant", content: "The docs are fine." },
    { role: "user", content: `Now the tests. ${"Please be thorough. ".repeat(200)}` },
    { role: "assistant", content: `Done. ${"All fine. ".repeat(60)}` },
  ];
  return messages.map((message, i) => ({ id: `entry${i}`, message }));
}

async function compactWith(reply: string, items: ContextItem[]) {
  let result: Awaited<ReturnType<typeof compact>>;
  await withScriptedServer([{ text: reply }], async (server) => {
    result = await compact(items, {
      provider: createOpenAiChatProvider({ baseUrl: server.baseUrl }),
      model: "m",
      settings: SETTINGS,
    });
  });
  return result!;
}

Deno.test("summaryLimit() is a quarter of the window, at most the reply's reserve", () => {
  assert.equal(summaryLimit(20_000), 5_000);
  assert.equal(summaryLimit(32_000), 8_000);
  assert.equal(summaryLimit(1_000_000), 8_000);
});

Deno.test("compact() uses the fallback summary when the model's is over summaryLimit()", async () => {
  const items = history(3_000);
  // Over the token limit, under the characters compact() reads (32 per token of it).
  const result = await compactWith(`## Goal\n${"word ".repeat(12_000)}`, items);
  assert.ok(result !== undefined);
  assert.equal(result.fallback, true);
  assert.match(
    result.error ?? "",
    /^Summary model returned about \d+ tokens, over the limit of 8000 \(a quarter of the context window, at most 8000\)$/,
  );
  assert.ok(result.summary.length <= FALLBACK_SUMMARY_MAX_CHARS, `${result.summary.length}`);
  assert.match(result.summary, /^## Goal\nFirst request:\nCount the lines of src\/main\.ts\./);
  assert.ok(result.tokensAfter < result.tokensBefore);
});

Deno.test("compact() uses the fallback summary when the model's frees no tokens", async () => {
  // The old part is under 100 tokens; a 3,000-token summary is under the limit but larger.
  const items = history(1);
  const reply = `## Goal\n${"- keep the public API of src/main.ts intact\n".repeat(300)}`;
  assert.ok(estimateMessageTokens(summaryMessage(reply)) < summaryLimit(SETTINGS.contextWindow));
  const result = await compactWith(reply, items);
  assert.ok(result !== undefined);
  assert.equal(result.fallback, true);
  assert.match(
    result.error ?? "",
    /^Summary model returned about \d+ tokens, no fewer than the \d+ it replaces$/,
  );
  assert.ok(!result.summary.includes("keep the public API"));
});

Deno.test("compact() keeps a model summary under the limit that frees tokens", async () => {
  const result = await compactWith("## Goal\n- count lines", history(3_000));
  assert.equal(result?.error, undefined);
  assert.equal(result?.fallback, false);
  assert.match(result?.summary ?? "", /^## Goal\n- count lines/);
});
