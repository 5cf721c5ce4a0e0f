import assert from "node:assert/strict";
import {
  compact,
  type CompactionSettings,
  type ContextItem,
  DEFAULT_COMPACTION,
  needsCompaction,
  recentBudget,
  SUMMARY_SECTIONS,
  summaryMessage,
} from "../../src/context/compaction.ts";
import { estimateMessageTokens } from "../../src/context/tokens.ts";
import type { Message } from "../../src/core/messages.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { type ScriptedServer, withScriptedServer } from "../support/scripted_server.ts";
import { randomConversation, seededRandom } from "./_conversations.ts";

const SETTINGS: CompactionSettings = {
  ...DEFAULT_COMPACTION,
  contextWindow: 32_000,
  keepRecentTokens: 1_000,
};

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  name,
  arguments: JSON.stringify(args),
});

/** Three user turns; the first (index 0–8) is old enough to be summarised. */
function history(): ContextItem[] {
  const messages: Message[] = [
    { role: "user", content: "Fix the failing parser test in src/parse.ts; keep the public API." },
    {
      role: "assistant",
      content: "",
      toolCalls: [call("call_r", "read", { path: "src/parse.ts" })],
    },
    {
      role: "tool",
      toolCallId: "call_r",
      name: "read",
      content: `SUCCEEDED\nHEAD-MARK\n${"const token = next();\n".repeat(2_300)}TAIL-MARK`,
    },
    {
      role: "assistant",
      content: "The empty case is missing.",
      toolCalls: [
        call("call_e", "edit", { path: "src/parse.ts", old_string: "a", new_string: "b" }),
      ],
    },
    { role: "tool", toolCallId: "call_e", name: "edit", content: "SUCCEEDED\nEdited src/parse.ts" },
    {
      role: "assistant",
      content: "",
      toolCalls: [call("call_b", "bash", { command: "deno test tests/parse_test.ts" })],
    },
    {
      role: "tool",
      toolCallId: "call_b",
      name: "bash",
      content: "ERROR[EXECUTION_FAILED]: TypeError: tokens is undefined at parse (src/parse.ts:12)",
    },
    { role: "assistant", content: "The parser now handles empty input." },
    { role: "user", content: "Keep going with the lexer." },
    { role: "user", content: "Now also add a test for unicode input." },
    {
      role: "assistant",
      content: "",
      toolCalls: [call("call_w", "write", { path: "tests/unicode_test.ts", content: "test" })],
    },
    { role: "tool", toolCallId: "call_w", name: "write", content: "SUCCEEDED\nWrote 4 bytes" },
    { role: "assistant", content: "Added the test." },
    { role: "user", content: "Run the whole suite." },
    {
      role: "assistant",
      content: "",
      toolCalls: [call("call_t", "bash", { command: "deno test" })],
    },
    {
      role: "tool",
      toolCallId: "call_t",
      name: "bash",
      content: `SUCCEEDED\n${"ok\n".repeat(3_000)}`,
    },
    { role: "assistant", content: "All 120 tests pass." },
  ];
  return messages.map((message, i) => ({ id: `entry${i}`, message }));
}

const REPLY = SUMMARY_SECTIONS.map((name) => `## ${name}\n- ${name} of the parser work`).join(
  "\n\n",
);

function tokens(items: ContextItem[]): number {
  return items.reduce((sum, item) => sum + estimateMessageTokens(item.message), 0);
}

function provider(server: ScriptedServer) {
  return createOpenAiChatProvider({ baseUrl: server.baseUrl });
}

Deno.test("compact() sends the old part with trimmed outputs and the focus, and no tools", async () => {
  await withScriptedServer([{ text: REPLY }], async (server) => {
    const items = history();
    const result = await compact(items, {
      provider: provider(server),
      model: "summary-model",
      settings: SETTINGS,
      focus: "the lexer changes",
    });
    assert.equal(server.requests.length, 1);
    const { modelRequest, body } = server.requests[0];
    assert.equal(modelRequest.model, "summary-model");
    assert.equal(body.tools, undefined);
    assert.deepEqual(modelRequest.messages.map((m) => m.role), ["system", "user"]);
    const [system, user] = modelRequest.messages;
    let from = 0;
    for (const name of SUMMARY_SECTIONS) {
      const at = system.content.indexOf(`## ${name}\n`, from);
      assert.ok(at > from, `system prompt lacks "## ${name}" in order`);
      from = at;
    }
    assert.match(user.content, /\[user\]\nFix the failing parser test in src\/parse\.ts/);
    assert.ok(user.content.includes('[tool call read id=call_r] {"path":"src/parse.ts"}'));
    assert.ok(user.content.includes("[tool result bash id=call_b]\nERROR[EXECUTION_FAILED]"));
    assert.ok(user.content.includes("HEAD-MARK") && user.content.includes("TAIL-MARK"));
    assert.match(user.content, /\[\.\.\. \d+ characters \(\d+ lines\) of tool output cut \.\.\.\]/);
    assert.ok(user.content.length < 20_000, `request of ${user.content.length} chars`);
    assert.ok(user.content.includes("Focus the summary on: the lexer changes"));
    assert.ok(!user.content.includes("unicode"), "the kept part was sent for summary");

    assert.ok(result !== undefined);
    assert.equal(result.summary, REPLY);
    assert.equal(result.fallback, false);
    assert.equal(result.error, undefined);
    assert.equal(result.firstKeptId, "entry9");
    assert.deepEqual(result.summarised, items.slice(0, 9).map((item) => item.id));
    assert.equal(result.tokensBefore, tokens(items));
    assert.equal(
      result.tokensAfter,
      estimateMessageTokens(summaryMessage(REPLY)) + tokens(items.slice(9)),
    );
    assert.ok(result.tokensAfter < result.tokensBefore);
  });
});

Deno.test("compact() falls back on HTTP 500 and keeps the turn data intact", async () => {
  await withScriptedServer([{ fault: "http500" }], async (server) => {
    const items = history();
    const before = structuredClone(items);
    const result = await compact(items, {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
    });
    assert.ok(result !== undefined);
    assert.equal(result.fallback, true);
    assert.match(result.error ?? "", /^Summary model call failed: HTTP 500 from model API/);
    assert.deepEqual(items, before);
    assert.equal(result.firstKeptId, "entry9");
    assert.equal(result.summarised.length, 9);
    const summary = result.summary;
    assert.ok(
      summary.includes("Fix the failing parser test in src/parse.ts; keep the public API."),
    );
    assert.match(summary, /## Changes\n- `src\/parse\.ts` \(edit\)/);
    assert.ok(summary.includes("TypeError: tokens is undefined at parse (src/parse.ts:12)"));
    assert.ok(summary.includes("- read `src/parse.ts`: SUCCEEDED"));
    assert.ok(summary.includes("- bash `deno test tests/parse_test.ts`: ERROR[EXECUTION_FAILED]"));
    assert.match(summary, /## Open items\n- Unfinished request: Keep going with the lexer\./);
    assert.equal(
      result.tokensAfter,
      estimateMessageTokens(summaryMessage(summary)) + tokens(items.slice(9)),
    );
  });
});

Deno.test("compact() falls back when the model returns no text", async () => {
  await withScriptedServer([{ fault: "empty" }], async (server) => {
    const result = await compact(history(), {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
    });
    assert.equal(result?.fallback, true);
    assert.equal(result?.error, "Summary model returned no text");
    assert.match(result?.summary ?? "", /^## Goal\nFirst request:\nFix the failing parser/);
  });
});

Deno.test("compact() falls back when the summary call outlasts timeoutMs", async () => {
  await withScriptedServer([{ fault: "hang" }], async (server) => {
    const result = await compact(history(), {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
      timeoutMs: 200,
    });
    assert.equal(result?.fallback, true);
    assert.equal(result?.error, "Summary model call timed out after 200 ms");
  });
});

Deno.test("compact() falls back when the caller cancels the summary call", async () => {
  await withScriptedServer([{ fault: "hang" }], async (server) => {
    const controller = new AbortController();
    const running = compact(history(), {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
      signal: controller.signal,
    });
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const result = await running;
    assert.equal(result?.fallback, true);
    assert.equal(result?.error, "Summary model call was cancelled");
  });
});

Deno.test("compact() adds the sections a model reply lacks, in order", async () => {
  const reply =
    "Here it is.\n\n### goal:\nParser fixed.\n\n## Failed paths\n- none\n\n## Evidence\n- read";
  await withScriptedServer([{ text: reply }], async (server) => {
    const result = await compact(history(), {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
    });
    assert.equal(result?.fallback, false);
    assert.equal(
      result?.summary,
      "Here it is.\n\n## Goal\nParser fixed.\n\n## Evidence\n- read\n\n## Changes\n(none recorded)" +
        "\n\n## Decisions\n(none recorded)\n\n## Failed paths\n- none\n\n## Open items\n(none recorded)",
    );
  });
});

Deno.test("compact() returns undefined and calls no model when everything is recent", async () => {
  await withScriptedServer([{ text: REPLY }], async (server) => {
    const items = history().slice(9);
    const result = await compact(items, {
      provider: provider(server),
      model: "m",
      settings: { ...SETTINGS, keepRecentTokens: 20_000 },
    });
    assert.equal(result, undefined);
    assert.equal(server.requests.length, 0);
  });
});

Deno.test("compact() merges an earlier summary into the request", async () => {
  await withScriptedServer([{ text: REPLY }], async (server) => {
    const items = [
      { id: "c0", message: summaryMessage("## Goal\nPort the tokenizer") },
      ...history(),
    ];
    await compact(items, {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
      previousSummary: "## Goal\nEarlier: migrate the CLI",
    });
    const user = server.requests[0].modelRequest.messages[1].content;
    assert.ok(
      user.includes("<previous-summary>\n## Goal\nEarlier: migrate the CLI\n</previous-summary>"),
    );
    assert.ok(user.includes("[summary of earlier work]\n## Goal\nPort the tokenizer"));
  });
});

Deno.test("compact() brings the context under the threshold when the recent part fits", async () => {
  await withScriptedServer(() => ({ text: REPLY }), async (server) => {
    const rand = seededRandom(31);
    let checked = 0;
    for (let seed = 0; seed < 60 && checked < 20; seed++) {
      const items = randomConversation(rand, seed);
      const settings = { ...DEFAULT_COMPACTION, contextWindow: [16_000, 32_000, 64_000][seed % 3] };
      if (!needsCompaction(tokens(items), settings)) continue;
      const result = await compact(items, { provider: provider(server), model: "m", settings });
      assert.ok(result !== undefined, `seed ${seed}: nothing compacted`);
      const cut = result.summarised.length;
      assert.deepEqual([...result.summarised, result.firstKeptId], [
        ...items.slice(0, cut).map((item) => item.id),
        items[cut]?.id ?? null,
      ]);
      const summaryTokens = estimateMessageTokens(summaryMessage(result.summary));
      assert.equal(result.tokensBefore, tokens(items));
      assert.equal(result.tokensAfter, summaryTokens + tokens(items.slice(cut)));
      // The part the token rule alone must keep: from the latest round start with enough tokens.
      const keep = Math.min(settings.keepRecentTokens, recentBudget(settings));
      let recent = items.length;
      while (
        recent > 0 &&
        (tokens(items.slice(recent)) < keep ||
          items[recent]?.message.role === "tool")
      ) recent--;
      const budget = settings.threshold * settings.contextWindow;
      if (tokens(items.slice(recent)) + summaryTokens <= budget) {
        checked++;
        assert.ok(result.tokensAfter <= budget, `seed ${seed}: ${result.tokensAfter} > ${budget}`);
      }
    }
    assert.ok(checked >= 10, `only ${checked} histories checked`);
  });
});

Deno.test("needsCompaction() is true at the threshold share of the window", () => {
  const settings = { ...DEFAULT_COMPACTION, contextWindow: 100_000 };
  assert.equal(needsCompaction(79_999, settings), false);
  assert.equal(needsCompaction(80_000, settings), true);
  assert.equal(needsCompaction(50_000, { ...settings, threshold: 0.5 }), true);
});

Deno.test("compact() rejects settings out of range", async () => {
  await assert.rejects(
    compact(history(), {
      provider: createOpenAiChatProvider({ baseUrl: "http://127.0.0.1:9/v1" }),
      model: "m",
      settings: { ...SETTINGS, threshold: 1.5 },
    }),
    RangeError,
  );
});

Deno.test("compact() drops the summarised messages' images and says so; kept ones stay", async () => {
  await withScriptedServer([{ text: REPLY }, { fault: "http500" }], async (server) => {
    const image = (n: number) => ({
      mediaType: "image/png" as const,
      data: "",
      sha256: `${n}`.repeat(64),
    });
    const items = history();
    const first = items[0].message;
    assert.equal(first.role, "user");
    items[0] = { ...items[0], message: { ...first, role: "user", images: [image(1), image(2)] } };
    const kept = items[9].message;
    items[9] = { ...items[9], message: { ...kept, role: "user", images: [image(3)] } };
    const result = await compact(items, {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
    });
    assert.ok(result !== undefined);
    assert.equal(result.firstKeptId, "entry9");
    assert.equal(result.imagesDropped, 2);
    // The summariser is told where the images were; no image goes with the summary request.
    const { modelRequest, body } = server.requests[0];
    assert.ok(
      modelRequest.messages[1].content.includes(
        "[2 images were attached here; compaction drops them, so they are not shown to you]",
      ),
      modelRequest.messages[1].content,
    );
    assert.ok(!JSON.stringify(body).includes("image_url"));
    assert.match(
      result.summary,
      /## Open items\n- Open items of the parser work\n- 2 images the person attached earlier were dropped by compaction; ask them to attach them again/,
    );
    // The fallback summary says so too.
    const fallback = await compact(items, {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
    });
    assert.equal(fallback?.fallback, true);
    assert.match(fallback?.summary ?? "", /2 images the person attached earlier were dropped/);
  });
});

Deno.test("estimateMessageTokens() counts IMAGE_TOKENS per image of a user message", () => {
  const plain: Message = { role: "user", content: "look" };
  const withImage: Message = {
    role: "user",
    content: "look",
    images: [{ mediaType: "image/png", data: "", sha256: "a".repeat(64) }],
  };
  assert.equal(estimateMessageTokens(withImage) - estimateMessageTokens(plain), 1_600);
});

Deno.test("compact() drops the images tool results returned and tells the model to read them again", async () => {
  await withScriptedServer([{ text: REPLY }], async (server) => {
    const items = history();
    const result2 = items[2].message;
    assert.equal(result2.role, "tool");
    const image = { mediaType: "image/png" as const, data: "", sha256: "7".repeat(64) };
    items[2] = { ...items[2], message: { ...result2, images: [image] } };
    const result = await compact(items, {
      provider: provider(server),
      model: "m",
      settings: SETTINGS,
    });
    assert.equal(result?.imagesDropped, 1);
    const { modelRequest } = server.requests[0];
    assert.ok(
      modelRequest.messages[1].content.includes(
        "[an image was returned here; compaction drops them, so they are not shown to you]",
      ),
    );
    assert.match(
      result?.summary ?? "",
      /- An image a tool returned \(read of an image file\) was dropped by compaction; read it again/,
    );
  });
});

Deno.test("estimateMessageTokens() counts IMAGE_TOKENS per image of a tool result", () => {
  const plain: Message = { role: "tool", toolCallId: "c", name: "read", content: "SUCCEEDED" };
  const withImage: Message = {
    ...plain,
    images: [{ mediaType: "image/png", data: "", sha256: "a".repeat(64) }],
  };
  assert.equal(estimateMessageTokens(withImage) - estimateMessageTokens(plain), 1_600);
});
