import assert from "node:assert/strict";
import {
  chooseCut,
  compact,
  type CompactionSettings,
  type ContextItem,
  DEFAULT_COMPACTION,
  isSummaryMessage,
  recentBudget,
} from "../../src/context/compaction.ts";
import { previewCompaction } from "../../src/context/compaction_preview.ts";
import { estimateMessageTokens } from "../../src/context/tokens.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { userVoice } from "../../src/session/voice.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { randomConversation, randomInt, seededRandom } from "./_conversations.ts";

const CASES = 300;

function randomSettings(rand: () => number): CompactionSettings {
  const pickOne = <T>(values: T[]) => values[Math.floor(rand() * values.length)];
  return {
    ...DEFAULT_COMPACTION,
    contextWindow: pickOne([16_000, 32_000, 128_000, 200_000]),
    keepRecentTokens: pickOne([0, 2_000, 8_000, 20_000, 20_000]),
    minRecentUserTurns: randomInt(rand, 0, 3),
  };
}

/** The rules of chooseCut written out naively, as the oracle for "the latest allowed cut". */
function expectedCut(items: ContextItem[], settings: CompactionSettings): number {
  const n = items.length;
  const each = items.map((item) => estimateMessageTokens(item.message));
  const tokensFrom = (j: number) => each.slice(j).reduce((sum, t) => sum + t, 0);
  const isTurn = (item: ContextItem) =>
    item.message.role === "user" && !isSummaryMessage(item.message);
  const users = items.filter(isTurn).length;
  const usersFrom = (j: number) => items.slice(j).filter(isTurn).length;
  const boundary = (j: number) => {
    if (j === 0) return true;
    if (j < n && items[j].message.role === "tool") return false;
    const keptResults = new Set(
      items.slice(j).flatMap(({ message }) => message.role === "tool" ? [message.toolCallId] : []),
    );
    return !items.slice(0, j).some(({ message }) =>
      message.role === "assistant" && (message.toolCalls ?? []).some((c) => keptResults.has(c.id))
    );
  };
  const keep = Math.min(settings.keepRecentTokens, recentBudget(settings));
  const cutFor = (turns: number) => {
    for (let j = n; j > 0; j--) {
      if (
        boundary(j) && tokensFrom(j) >= keep &&
        usersFrom(j) >= Math.min(turns, users)
      ) return j;
    }
    return 0;
  };
  for (let turns = settings.minRecentUserTurns; turns > 0; turns--) {
    if (tokensFrom(cutFor(turns)) <= recentBudget(settings)) return cutFor(turns);
  }
  const cut = cutFor(0);
  if (tokensFrom(cut) <= recentBudget(settings)) return cut;
  // The kept part alone is over the budget: the earliest boundary after it that fits, before
  // the last message.
  for (let j = cut + 1; j < n; j++) {
    if (boundary(j) && tokensFrom(j) <= recentBudget(settings)) return j;
  }
  return cut;
}

function keptTokens(items: ContextItem[], cut: number): number {
  return items.slice(cut).reduce((sum, item) => sum + estimateMessageTokens(item.message), 0);
}

Deno.test("chooseCut() never separates a tool round and keeps enough, over 300 random histories", () => {
  const rand = seededRandom(4_006);
  let compacted = 0;
  let turnRuleRelaxed = 0;
  for (let seed = 0; seed < CASES; seed++) {
    const items = randomConversation(rand, seed);
    const settings = randomSettings(rand);
    const cut = chooseCut(items, settings);
    const where = `seed ${seed}, cut ${cut} of ${items.length}`;
    assert.ok(cut >= 0 && cut <= items.length, where);
    if (cut === 0) continue;
    compacted++;
    const kept = items.slice(cut);
    assert.notEqual(kept[0]?.message.role, "tool", `${where}: kept part starts at a tool result`);
    const keptCalls = new Set(
      kept.flatMap(({ message }) =>
        message.role === "assistant" ? (message.toolCalls ?? []).map((c) => c.id) : []
      ),
    );
    for (const { message } of kept) {
      if (message.role === "tool") {
        assert.ok(keptCalls.has(message.toolCallId), `${where}: result without its call`);
      }
    }
    const keep = Math.min(settings.keepRecentTokens, recentBudget(settings));
    // Less is kept only when keeping `keep` tokens would keep more than the budget (the
    // oracle below says which cut then).
    assert.ok(
      keptTokens(items, cut) >= keep || keptTokens(items, cut) <= recentBudget(settings),
      `${where}: too little kept`,
    );
    const userIds = items.filter(({ message }) =>
      message.role === "user" && !isSummaryMessage(message)
    ).map((item) => item.id);
    const lastTurns = userIds.slice(Math.max(0, userIds.length - settings.minRecentUserTurns));
    const keptIds = new Set(kept.map((item) => item.id));
    const turnsKept = settings.minRecentUserTurns === 0 || lastTurns.every((id) => keptIds.has(id));
    if (!turnsKept) {
      turnRuleRelaxed++;
      assert.ok(
        keptTokens(items, items.findIndex((item) => item.id === lastTurns[0])) >
          recentBudget(settings),
        `${where}: a recent user turn was summarised though the turns fit the budget`,
      );
    }
    assert.equal(cut, expectedCut(items, settings), `${where}: not the latest allowed cut`);
  }
  // The generator must exercise both paths, or the properties above prove little.
  assert.ok(compacted > CASES / 4, `only ${compacted} histories were compacted`);
  assert.ok(turnRuleRelaxed > 0, "no history needed the user-turn rule relaxed");
});

Deno.test("chooseCut() returns 0 when the whole history is recent", () => {
  const items: ContextItem[] = [
    { id: "u1", message: { role: "user", content: "Fix the bug" } },
    { id: "a1", message: { role: "assistant", content: "Done." } },
  ];
  assert.equal(chooseCut(items, { ...DEFAULT_COMPACTION, contextWindow: 128_000 }), 0);
  assert.equal(chooseCut([], { ...DEFAULT_COMPACTION, contextWindow: 128_000 }), 0);
});

Deno.test("chooseCut() moves the cut back past tool results to their assistant message", () => {
  const big = "x".repeat(40_000);
  const items: ContextItem[] = [
    { id: "u1", message: { role: "user", content: "first" } },
    { id: "a1", message: { role: "assistant", content: "ok" } },
    { id: "u2", message: { role: "user", content: "second" } },
    {
      id: "a2",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "c1", name: "read", arguments: '{"path":"a.ts"}' },
          { id: "c2", name: "read", arguments: '{"path":"b.ts"}' },
        ],
      },
    },
    { id: "t1", message: { role: "tool", toolCallId: "c1", name: "read", content: big } },
    { id: "t2", message: { role: "tool", toolCallId: "c2", name: "read", content: big } },
  ];
  const settings = {
    ...DEFAULT_COMPACTION,
    contextWindow: 200_000,
    keepRecentTokens: 1_000,
    minRecentUserTurns: 0,
  };
  // The token rule alone would cut before t2; the round starts at a2.
  assert.equal(chooseCut(items, settings), 3);
});

/** About 10,000 characters of code-like text. */
function source(file: number): string {
  return Array.from({ length: 300 }, (_, k) => `const v${file}_${k} = load("f${k}");\n`).join("");
}

Deno.test("chooseCut() summarises the only user turn of a long task when it outgrows the budget", () => {
  const items: ContextItem[] = [{ id: "u1", message: { role: "user", content: "Port it all" } }];
  for (let i = 0; i < 40; i++) {
    items.push({
      id: `a${i}`,
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: `c${i}`, name: "read", arguments: `{"path":"f${i}.ts"}` }],
      },
    }, {
      id: `t${i}`,
      message: { role: "tool", toolCallId: `c${i}`, name: "read", content: source(i) },
    });
  }
  const settings = { ...DEFAULT_COMPACTION, contextWindow: 128_000 };
  const cut = chooseCut(items, settings);
  assert.ok(cut > 1, `expected a cut inside the turn, got ${cut}`);
  assert.equal(items[cut].message.role, "assistant");
  const kept = keptTokens(items, cut);
  const round = keptTokens(items.slice(1, 3), 0);
  assert.ok(kept >= settings.keepRecentTokens && kept < settings.keepRecentTokens + round);
});

Deno.test("chooseCut() never cuts between a call and a result that arrives after another message", () => {
  const items: ContextItem[] = [
    { id: "u1", message: { role: "user", content: "start" } },
    {
      id: "a1",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "c1", name: "bash", arguments: '{"command":"make"}' },
          { id: "c2", name: "bash", arguments: '{"command":"make test"}' },
        ],
      },
    },
    { id: "t1", message: { role: "tool", toolCallId: "c1", name: "bash", content: "ok" } },
    { id: "u2", message: { role: "user", content: "also lint" } },
    {
      id: "t2",
      message: { role: "tool", toolCallId: "c2", name: "bash", content: "z".repeat(9_000) },
    },
    { id: "a2", message: { role: "assistant", content: "Done." } },
  ];
  const settings = {
    ...DEFAULT_COMPACTION,
    contextWindow: 200_000,
    keepRecentTokens: 1_000,
    minRecentUserTurns: 1,
  };
  // u2 is the last user turn, but the round a1..t2 spans it: the cut moves back to a1.
  assert.equal(chooseCut(items, settings), 1);
});

/** A subagent's completion as tern delivers it (harness/subagents/mailbox.ts completionText). */
function completion(task: string, answer: string): string {
  return `[subagent ${task} (agent a1, run r1, child session ` +
    `0b7e2c1a-1111-4222-8333-944455556666) completed]\n--- BEGIN SUBAGENT ANSWER 1a2b3c4d ` +
    `(the subagent's words, not tern's or the person's) ---\n${answer}\n` +
    `--- END SUBAGENT ANSWER 1a2b3c4d ---`;
}

const voiceOf = (content: string) => {
  const voice = userVoice(content);
  return voice.from === "person" ? undefined : voice.from;
};

Deno.test("chooseCut() never counts a subagent's result as the person's turn", () => {
  const items: ContextItem[] = [
    { id: "u0", message: { role: "user", content: `Old request ${"x ".repeat(3_000)}` } },
    { id: "a0", message: { role: "assistant", content: "Done." } },
    { id: "u1", message: { role: "user", content: "Review the parser with two subagents" } },
    { id: "a1", message: { role: "assistant", content: "Spawned two reviewers." } },
    { id: "s1", message: { role: "user", content: completion("review-a", "y ".repeat(400)) } },
    { id: "a2", message: { role: "assistant", content: "First review read." } },
    { id: "s2", message: { role: "user", content: completion("review-b", "z ".repeat(400)) } },
    { id: "a3", message: { role: "assistant", content: "Both reviews read." } },
  ];
  const settings = {
    ...DEFAULT_COMPACTION,
    contextWindow: 200_000,
    keepRecentTokens: 10,
    minRecentUserTurns: 2,
  };
  // The person's turns are u0 and u1: the two subagent results must not stand in for them, or
  // the person's latest request (u1) would be summarised while the results are kept.
  assert.equal(chooseCut(items, settings, { voiceOf }), 0);
  assert.equal(chooseCut(items, { ...settings, minRecentUserTurns: 1 }, { voiceOf }), 2);
  const preview = previewCompaction(items, { ...settings, minRecentUserTurns: 1 }, { voiceOf });
  assert.equal(preview.cut, 2);
  assert.deepEqual([preview.summarised.turns, preview.kept.turns], [1, 1]);
});

Deno.test("compact() keeps the person's latest request whole when subagent results follow it", async () => {
  const items: ContextItem[] = [
    { id: "u0", message: { role: "user", content: `Old request ${"x ".repeat(3_000)}` } },
    { id: "a0", message: { role: "assistant", content: "Done." } },
    { id: "u1", message: { role: "user", content: "Review the parser with a subagent" } },
    { id: "a1", message: { role: "assistant", content: "Spawned a reviewer." } },
    { id: "s1", message: { role: "user", content: completion("review", "y ".repeat(400)) } },
    { id: "a2", message: { role: "assistant", content: "Review read." } },
  ];
  await withScriptedServer([{ text: "## Goal\nOld work." }], async (server) => {
    const result = await compact(items, {
      provider: createOpenAiChatProvider({ baseUrl: server.baseUrl }),
      model: "m",
      settings: {
        ...DEFAULT_COMPACTION,
        contextWindow: 200_000,
        keepRecentTokens: 10,
        minRecentUserTurns: 1,
      },
      voiceOf,
    });
    assert.equal(result?.firstKeptId, "u1");
    assert.deepEqual(result?.summarised, ["u0", "a0"]);
  });
});
