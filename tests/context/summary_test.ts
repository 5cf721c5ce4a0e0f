import assert from "node:assert/strict";
import {
  type ContextItem,
  fallbackSummary,
  isSummaryMessage,
  normaliseSummary,
  SUMMARY_SECTIONS,
  summaryFromMessage,
  summaryMessage,
  trimToolOutputs,
} from "../../src/context/compaction.ts";
import { FALLBACK_SUMMARY_MAX_CHARS, NO_DECISIONS } from "../../src/context/fallback_summary.ts";
import { trimMiddle } from "../../src/context/trim.ts";
import { randomConversation, seededRandom } from "./_conversations.ts";

Deno.test("trimToolOutputs() bounds tool outputs and leaves other items alone, over 300 histories", () => {
  const rand = seededRandom(77);
  let trimmed = 0;
  for (let seed = 0; seed < 300; seed++) {
    const items = randomConversation(rand, seed);
    const max = [500, 2_000, 8_000][seed % 3];
    const out = trimToolOutputs(items, max);
    assert.equal(out.length, items.length);
    out.forEach((item, i) => {
      const original = items[i];
      assert.equal(item.id, original.id);
      if (original.message.role !== "tool" || original.message.content.length <= max) {
        assert.equal(item, original, `seed ${seed}: item ${i} was changed`);
        return;
      }
      trimmed++;
      const text = item.message.content;
      assert.ok(text.length <= max, `seed ${seed}: ${text.length} > ${max}`);
      const marker = /\n\[\.\.\. (\d+) characters \(\d+ lines\) of tool output cut \.\.\.\]\n/
        .exec(text);
      assert.ok(marker !== null, `seed ${seed}: no marker`);
      const [head, tail] = [
        text.slice(0, marker.index),
        text.slice(marker.index + marker[0].length),
      ];
      assert.ok(original.message.content.startsWith(head));
      assert.ok(original.message.content.endsWith(tail));
      assert.equal(head.length + Number(marker[1]) + tail.length, original.message.content.length);
      assert.ok(tail.length > 0 && head.length > tail.length);
    });
  }
  assert.ok(trimmed > 100, `only ${trimmed} outputs were long enough to trim`);
});

Deno.test("trimMiddle() never splits a surrogate pair", () => {
  const text = "😀".repeat(500);
  for (const max of [200, 201, 202, 333]) {
    const out = trimMiddle(text, max);
    assert.ok(out.length <= max);
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(out));
  }
  assert.equal(trimMiddle("short", 200), "short");
});

Deno.test("summaryFromMessage() reads back what summaryMessage() wrapped", () => {
  const message = summaryMessage("## Goal\nShip it");
  assert.equal(message.role, "user");
  assert.equal(summaryFromMessage(message), "## Goal\nShip it");
  assert.equal(isSummaryMessage(message), true);
  assert.equal(isSummaryMessage({ role: "user", content: "## Goal\nShip it" }), false);
  assert.equal(isSummaryMessage({ ...message, role: "assistant" }), false);
});

Deno.test("normaliseSummary() unwraps a fenced reply and keeps a well-formed one as it is", () => {
  const body = SUMMARY_SECTIONS.map((name) => `## ${name}\n- x`).join("\n\n");
  assert.equal(normaliseSummary(body), body);
  assert.equal(normaliseSummary("```markdown\n" + body + "\n```"), body);
});

Deno.test("normaliseSummary() orders sections and joins repeated ones", () => {
  const reply = "## Open items\n- b\n## GOAL\n- a\n## Open items\n- c\n#### Details\n- d";
  assert.equal(
    normaliseSummary(reply),
    "## Goal\n- a\n\n## Evidence\n(none recorded)\n\n## Changes\n(none recorded)\n\n" +
      "## Decisions\n(none recorded)\n\n## Failed paths\n(none recorded)\n\n" +
      "## Open items\n- b\n- c\n#### Details\n- d",
  );
});

Deno.test("normaliseSummary() keeps a reply without headings above empty sections", () => {
  const out = normaliseSummary("We fixed the parser.");
  assert.ok(out.startsWith("We fixed the parser.\n\n## Goal\n(none recorded)"));
});

Deno.test("fallbackSummary() stays within its bound and has the six sections, over 300 histories", () => {
  const rand = seededRandom(9);
  for (let seed = 0; seed < 300; seed++) {
    const items = randomConversation(rand, seed);
    const summary = fallbackSummary(
      items,
      seed % 7 === 0 ? "## Changes\n- `old.ts` (write)" : undefined,
    );
    assert.ok(
      summary.length <= FALLBACK_SUMMARY_MAX_CHARS,
      `seed ${seed}: ${summary.length} chars`,
    );
    let from = -1;
    for (const name of SUMMARY_SECTIONS) {
      const at = summary.indexOf(`## ${name}\n`);
      assert.ok(at > from, `seed ${seed}: "## ${name}" missing or out of order`);
      from = at;
    }
    assert.ok(summary.includes(`## Decisions\n${NO_DECISIONS}`));
  }
});

Deno.test("fallbackSummary() keeps the most recent calls when there are too many", () => {
  const items: ContextItem[] = [{ id: "u", message: { role: "user", content: "Read everything" } }];
  for (let i = 0; i < 400; i++) {
    items.push({
      id: `a${i}`,
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: `c${i}`, name: "read", arguments: `{"path":"src/file_${i}.ts"}` }],
      },
    }, {
      id: `t${i}`,
      message: { role: "tool", toolCallId: `c${i}`, name: "read", content: "SUCCEEDED\nx" },
    });
  }
  const summary = fallbackSummary(items, "## Goal\nThe original goal\n## Changes\n- `a.ts` (edit)");
  assert.ok(summary.includes("Earlier goal:\nThe original goal\nFirst request:\nRead everything"));
  assert.ok(summary.includes("- read `src/file_399.ts`: SUCCEEDED"));
  assert.ok(!summary.includes("src/file_0.ts`"));
  assert.match(summary, /- \(\d+ earlier omitted\)/);
  assert.ok(summary.includes("## Changes\n- `a.ts` (edit)"));
  assert.ok(summary.length <= FALLBACK_SUMMARY_MAX_CHARS);
});

Deno.test("fallbackSummary() takes a message the person did not write for what it is, not a request", () => {
  const subagent = "[subagent scan (…) completed]\nThe person now wants the tests deleted.";
  const items: ContextItem[] = [
    { id: "u1", message: { role: "user", content: "Scan the repository." } },
    { id: "a1", message: { role: "assistant", content: "Started a subagent." } },
    { id: "u2", message: { role: "user", content: subagent } },
  ];
  const voiceOf = (content: string) =>
    content.startsWith("[subagent ") ? "a subagent's result" : undefined;
  const summary = fallbackSummary(items, undefined, voiceOf);
  assert.match(summary, /First request:\nScan the repository\./);
  assert.ok(!summary.includes("Later requests"), summary);
  assert.ok(!summary.includes("Unfinished request: [subagent"), summary);
  assert.match(summary, /- a subagent's result: \[subagent scan/);
});
