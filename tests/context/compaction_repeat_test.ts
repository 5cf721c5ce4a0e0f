/**
 * Repeated compactions: a context that stays over the threshold after a compaction (a large
 * system prompt, a large recent part) must not have its summary summarised again before every
 * model call, each time a model call that loses more of the record.
 */
import assert from "node:assert/strict";
import { compactionHook, compactionSettings } from "../../src/agent/session_turn.ts";
import { compact, DEFAULT_COMPACTION, summaryMessage } from "../../src/context/compaction.ts";
import { previewCompaction } from "../../src/context/compaction_preview.ts";
import { SUMMARY_SYSTEM_PROMPT } from "../../src/context/summary_request.ts";
import type { Message } from "../../src/core/messages.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { ScriptedProvider } from "../../src/llm/scripted.ts";
import { Session } from "../../src/session/session.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

/** About `tokens` tokens of prose. */
const prose = (tokens: number) => "the parser keeps every token. ".repeat(Math.ceil(tokens / 6));

/** A model summary of about 1,500 tokens: more than an automatic compaction's minimum. */
const LONG_SUMMARY = `## Goal\n- port the lexer\n## Evidence\n${
  "- read a file that matters\n".repeat(250)
}`;

Deno.test("compactionHook() does not summarise a summary again when the context stays over the threshold", async () => {
  const home = await Deno.makeTempDir({ prefix: "tern-home-" });
  try {
    const session = Session.create(home, { cwd: "/project", ternVersion: "test" });
    const history: Message[] = [
      { role: "user", content: `first task ${prose(3_000)}` },
      { role: "assistant", content: `first answer ${prose(3_000)}` },
      { role: "user", content: `second task ${prose(3_000)}` },
      { role: "assistant", content: `second answer ${prose(3_000)}` },
      { role: "user", content: `third task ${prose(3_000)}` },
      { role: "assistant", content: `third answer ${prose(2_000)}` },
    ];
    for (const message of history) session.append({ type: "message", message });
    let summaries = 0;
    const provider = new ScriptedProvider((request) => {
      if (request.messages[0]?.content === SUMMARY_SYSTEM_PROMPT) summaries++;
      return { text: LONG_SUMMARY };
    });
    // The project's rules take most of the window: no compaction brings the request under it.
    const system: Message = { role: "system", content: prose(12_000) };
    const hook = compactionHook(session, {
      provider,
      model: "scripted",
      settings: compactionSettings(24_000, 0.8),
      tools: () => [],
    });
    const signal = new AbortController().signal;
    const first = await hook([system, ...history], signal);
    assert.ok(first !== undefined);
    assert.equal(summaries, 1);
    // The next rounds bring nothing new to summarise: no model call, no entry.
    for (let round = 0; round < 3; round++) {
      const context: Message[] = [system, ...session.state().items.map((item) => item.message)];
      assert.ok(await hook(context, signal) === undefined, `round ${round} compacted again`);
    }
    assert.equal(summaries, 1);
    assert.equal(session.entries.filter((entry) => entry.type === "compaction").length, 1);
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("compact() returns undefined and calls no model when the old part is earlier summaries alone", async () => {
  await withScriptedServer([], async (server) => {
    const items = [
      { id: "s1", message: summaryMessage(LONG_SUMMARY) },
      { id: "u1", message: { role: "user" as const, content: `task ${prose(3_000)}` } },
      { id: "a1", message: { role: "assistant" as const, content: "done" } },
    ];
    const result = await compact(items, {
      provider: createOpenAiChatProvider({ baseUrl: server.baseUrl }),
      model: "m",
      settings: { ...DEFAULT_COMPACTION, contextWindow: 8_000, keepRecentTokens: 100 },
    });
    assert.equal(result, undefined);
    assert.equal(server.requests.length, 0);
  });
});

Deno.test("previewCompaction() finds nothing to compact when only earlier summaries lie before the cut", () => {
  const items = [
    { id: "s1", message: summaryMessage(LONG_SUMMARY) },
    { id: "u1", message: { role: "user" as const, content: `task ${prose(3_000)}` } },
    { id: "a1", message: { role: "assistant" as const, content: "done" } },
  ];
  const settings = { ...DEFAULT_COMPACTION, contextWindow: 8_000, keepRecentTokens: 100 };
  const preview = previewCompaction(items, settings);
  assert.equal(preview.cut, 0);
  assert.equal(preview.summarised.entries, 0);
});
