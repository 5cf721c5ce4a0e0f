/** Seeded random conversations for the compaction property tests. */
import type { Message, ToolCall } from "../../src/core/messages.ts";
import type { ContextItem } from "../../src/context/compaction.ts";
import { summaryMessage } from "../../src/context/summary.ts";

/** A small seeded PRNG (mulberry32): the same seed gives the same conversations. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ("parser token session branch fix test read file error value index cache " +
  "request model window budget summary compact tool call result output line path")
  .split(" ");

export function randomInt(rand: () => number, min: number, max: number): number {
  return min + Math.floor(rand() * (max - min + 1));
}

function pick<T>(rand: () => number, values: readonly T[]): T {
  return values[Math.floor(rand() * values.length)];
}

/** Roughly `chars` characters of word-salad prose and code-like lines. */
export function randomText(rand: () => number, chars: number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const word = rand() < 0.05 ? "\n" : pick(rand, WORDS) + (rand() < 0.1 ? "();" : " ");
    parts.push(word);
    length += word.length;
  }
  return parts.join("").slice(0, chars);
}

const TOOLS = ["read", "write", "edit", "bash", "grep"] as const;

function randomCall(rand: () => number, id: string): ToolCall {
  const name = pick(rand, TOOLS);
  const path = `src/${pick(rand, WORDS)}_${randomInt(rand, 1, 99)}.ts`;
  const args = name === "bash"
    ? { command: `deno test ${path}` }
    : name === "grep"
    ? { pattern: pick(rand, WORDS) }
    : name === "write"
    ? { path, content: randomText(rand, randomInt(rand, 10, 6_000)) }
    : name === "edit"
    ? { path, old_string: "a", new_string: "b" }
    : { path };
  return { id, name, arguments: JSON.stringify(args) };
}

function outputSize(rand: () => number): number {
  const r = rand();
  if (r < 0.06) return 50_000;
  if (r < 0.3) return randomInt(rand, 2_000, 12_000);
  return randomInt(rand, 20, 800);
}

/**
 * A conversation of 1–8 user turns, each followed by 0–6 assistant rounds with 0–3 tool calls
 * and their results (sizes up to 50,000 characters, some errors), usually ending with an
 * answer. Sometimes it starts with a compaction summary, and the last turn may stop mid-round.
 */
export function randomConversation(rand: () => number, seed: number): ContextItem[] {
  const messages: Message[] = [];
  if (rand() < 0.1) messages.push(summaryMessage(`## Goal\nEarlier goal ${seed}`));
  const turns = randomInt(rand, 1, 8);
  let callNo = 0;
  for (let turn = 0; turn < turns; turn++) {
    messages.push({
      role: "user",
      content: `Request ${turn}: ${randomText(rand, randomInt(rand, 20, 1_500))}`,
    });
    const rounds = randomInt(rand, 0, 6);
    for (let round = 0; round < rounds; round++) {
      const calls = Array.from(
        { length: randomInt(rand, 0, 3) },
        () => randomCall(rand, `call_${seed}_${callNo++}`),
      );
      const text = rand() < 0.5 ? randomText(rand, randomInt(rand, 10, 400)) : "";
      messages.push(
        calls.length > 0 ? { role: "assistant", content: text, toolCalls: calls } : {
          role: "assistant",
          content: text || "Thinking.",
        },
      );
      for (const call of calls) {
        const failed = rand() < 0.15;
        messages.push({
          role: "tool",
          toolCallId: call.id,
          name: call.name,
          content: failed
            ? `ERROR[EXECUTION_FAILED]: Cannot ${call.name} "${call.id}": failed`
            : `SUCCEEDED\n${randomText(rand, outputSize(rand))}`,
        });
      }
    }
    const last = turn === turns - 1;
    if (!last || rand() < 0.6) {
      messages.push({ role: "assistant", content: `Done with request ${turn}.` });
    }
  }
  return messages.map((message, i) => ({ id: `e${seed}_${i}`, message }));
}
