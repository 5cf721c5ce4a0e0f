/**
 * Remembered facts against floods: a long message (a pasted log) against many facts is ranked
 * in time that grows with the text, not with the message's words times the facts'; and however
 * many facts a project's `memoryFacts` asks for, what rides with a message stays under a cap.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import type { Fact } from "../../src/memory/facts.ts";
import { rankedMemorySection, rankFacts } from "../../src/memory/rank.ts";

function fact(index: number, text: string): Fact {
  const id = index.toString(16).padStart(8, "0");
  return { id, text, scope: "project", created: new Date(index * 1000).toISOString() };
}

// How long it takes is not asserted (speed belongs to benchmarks): each word of the message looked
// for in each fact took 15 s here, counting each fact's words once 0.3 s.
Deno.test("rankFacts() ranks a 60,000-word message against 1,000 facts", () => {
  const facts = Array.from(
    { length: 1_000 },
    (_, i) => fact(i, Array.from({ length: 100 }, (_, j) => `fact${i}word${j}`).join(" ")),
  );
  const message = Array.from({ length: 60_000 }, (_, j) => `log${j}`).join(" ") +
    " fact7word3 fact9word1 fact7word5";
  const chosen = rankFacts(facts, message, 5);
  deepEqual(chosen.map((entry) => entry.fact.id), ["00000007", "00000009"]);
  deepEqual(chosen[0].terms, ["fact7word3", "fact7word5"]);
});

Deno.test("rankedMemorySection() keeps the facts sent with a message under its character cap", () => {
  // A project may set memoryFacts to 100; each fact may hold 2,000 characters.
  const facts = Array.from(
    { length: 100 },
    (_, i) => fact(i, `deploy note ${i} ${"x".repeat(1_980)}`),
  );
  const chosen = rankFacts(facts, "how do we deploy", 100);
  equal(chosen.length, 100);
  const section = rankedMemorySection(chosen)!;
  const lines = section.split("\n");
  const factLines = lines.filter((line) => line.startsWith("- "));
  ok(factLines.join("\n").length <= 8_000, `${factLines.join("\n").length} characters`);
  ok(factLines.length >= 3, `${factLines.length} facts`);
  equal(
    lines.at(-1),
    `[${100 - factLines.length} less relevant facts were left out: the facts sent with a message ` +
      "are kept under 8,000 characters]",
  );
});
