import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { countTokens } from "gpt-tokenizer";
import { fitRound } from "../../src/agent/tool_result_budget.ts";
import { isSplitCjk } from "../../src/context/_cjk_single_tokens.ts";
import { estimateRequestTokens, estimateTokens } from "../../src/context/tokens.ts";
import type { Message } from "../../src/core/messages.ts";
import { seededRandom } from "../support/seeded.ts";

/** `length` characters drawn from `alphabet` (code points), seeded. */
function random(seed: number, length: number, alphabet: number[]): string {
  const next = seededRandom(seed);
  let text = "";
  for (let i = 0; i < length; i++) {
    text += String.fromCodePoint(alphabet[Math.floor(next() * alphabet.length)]);
  }
  return text;
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);
const chars = (text: string) => [...text].map((c) => c.codePointAt(0)!);

/** Text o200k_base cannot merge, as a file or a tool's output may hold it. */
const UNMERGED: Record<string, string> = {
  "random lower-case letters": random(1, 6_000, range(0x61, 0x7a)),
  "random accented Latin letters": random(2, 3_000, range(0xe0, 0xff)),
  "random Hangul syllables": random(3, 3_000, range(0xac00, 0xd7a3)),
  "random CJK ideographs": random(4, 3_000, range(0x4e00, 0x9fff)),
  "CJK extension B ideographs": random(5, 2_000, range(0x20000, 0x2a6df)),
  "private-use characters": random(6, 2_000, range(0xe000, 0xf8ff)),
  "mathematical letters": random(7, 2_000, range(0x1d400, 0x1d7ff)),
};

for (const [name, text] of Object.entries(UNMERGED)) {
  Deno.test(`estimateTokens() is not far below o200k_base on ${name}`, () => {
    const real = countTokens(text);
    const estimate = estimateTokens(text);
    ok(estimate >= 0.85 * real, `estimate ${estimate}, o200k_base ${real}`);
    ok(estimate <= 2 * real, `estimate ${estimate}, o200k_base ${real}`);
  });
}

Deno.test("estimateTokens() is not far below o200k_base on random Greek and Cyrillic words", () => {
  const scripts: Array<[number, number[]]> = [[8, range(0x3b1, 0x3c9)], [9, range(0x430, 0x44f)]];
  for (const [seed, letters] of scripts) {
    const text = random(seed, 4_000, [...letters, 0x20]);
    const real = countTokens(text);
    const estimate = estimateTokens(text);
    ok(estimate >= 0.6 * real, `estimate ${estimate}, o200k_base ${real}`);
  }
});

/** Words of 1 to `2 × mean` letters drawn from `letters`, space-separated, seeded. */
function randomWords(seed: number, length: number, letters: number[], mean: number): string {
  const next = seededRandom(seed);
  let text = "";
  while (text.length < length) {
    const size = 1 + Math.floor(next() * 2 * mean);
    for (let i = 0; i < size; i++) {
      text += String.fromCodePoint(letters[Math.floor(next() * letters.length)]);
    }
    text += " ";
  }
  return text;
}

Deno.test("estimateTokens() is not far below o200k_base on random Greek and Cyrillic words of any length", () => {
  const scripts: Array<[string, number[]]> = [
    ["Greek", range(0x3b1, 0x3c9)],
    ["Cyrillic", range(0x430, 0x44f)],
    ["Cyrillic both cases", range(0x410, 0x44f)],
  ];
  const low: string[] = [];
  for (const [name, letters] of scripts) {
    for (const mean of [2, 3, 6, 10, 15]) {
      const text = randomWords(mean * 7 + letters[0], 4_000, letters, mean);
      const [real, estimate] = [countTokens(text), estimateTokens(text)];
      if (estimate < 0.7 * real || estimate > 2 * real) {
        low.push(`${name}, ${mean} letters a word: ${estimate} for ${real}`);
      }
    }
  }
  equal(low.join("\n"), "");
  // Greek prose costs o200k_base more than Russian prose does.
  const greek = ("Η Ελλάδα είναι χώρα της νοτιοανατολικής Ευρώπης. Η πρωτεύουσα και μεγαλύτερη " +
    "πόλη της είναι η Αθήνα. Ο πληθυσμός της χώρας ανέρχεται σε περίπου δέκα εκατομμύρια " +
    "κατοίκους. ").repeat(8);
  const [real, estimate] = [countTokens(greek), estimateTokens(greek)];
  ok(estimate >= 0.9 * real && estimate <= 1.2 * real, `estimate ${estimate}, o200k_base ${real}`);
});

Deno.test("isSplitCjk() is true exactly for the ideographs and syllables o200k_base splits", () => {
  const wrong: string[] = [];
  for (const code of [...range(0x4e00, 0x9fff), ...range(0xac00, 0xd7a3)]) {
    const split = countTokens(String.fromCharCode(code)) > 1;
    if (isSplitCjk(code) !== split) wrong.push(code.toString(16));
  }
  equal(wrong.join(" "), "");
  for (const code of chars("aé😀。\u3400\ud7a4")) equal(isSplitCjk(code), false);
});

Deno.test("fitRound() holds a round of unmergeable results to its budget in real tokens", async () => {
  const root = await Deno.makeTempDir({ prefix: "tern-budget-" });
  try {
    const dir = join(root, "s", "tool-results");
    const round = [0, 1, 2].map((i) => ({
      callId: `c${i}`,
      observation: {
        status: "SUCCEEDED" as const,
        output: random(20 + i, 8_000, range(0xac00, 0xd7a3)),
      },
    }));
    const fitted = await fitRound(round, { limitTokens: 12_000, dir });
    const real = fitted.reduce(
      (sum, o) => sum + countTokens(o.status === "SUCCEEDED" ? o.output : o.message),
      0,
    );
    ok(real <= 12_000 * 1.2, `the round holds ${real} tokens`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("estimateRequestTokens() counts the reasoning of the current tool loop, not earlier turns'", () => {
  const thought = "Let me think about the parser and its many cases. ".repeat(800);
  const round = (i: number): Message[] => [
    {
      role: "assistant",
      content: "",
      thinking: [{ api: "anthropic", text: thought, signature: "sig" }],
      toolCalls: [{ id: `c${i}`, name: "read", arguments: '{"path":"a.ts"}' }],
    },
    { role: "tool", toolCallId: `c${i}`, name: "read", content: "SUCCEEDED\nok" },
  ];
  const earlier: Message[] = [{ role: "user", content: "Fix it." }, ...round(0)];
  const loop: Message[] = [{ role: "user", content: "Now the lexer." }, ...round(1), ...round(2)];
  const withoutThinking = (messages: Message[]) =>
    messages.map((m) => m.role === "assistant" ? { ...m, thinking: undefined } : m);
  const all = [...earlier, ...loop];
  const extra = estimateRequestTokens(all) - estimateRequestTokens(withoutThinking(all));
  equal(extra, 2 * estimateTokens(thought));
  // With a cache, the same count.
  const cache = new WeakMap<object, number>();
  equal(estimateRequestTokens(all, [], cache), estimateRequestTokens(all));
  equal(estimateRequestTokens(all, [], cache), estimateRequestTokens(all));
});
