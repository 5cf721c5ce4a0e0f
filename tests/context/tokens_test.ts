import { deepEqual, equal, ok } from "node:assert/strict";
import { countTokens, encode } from "gpt-tokenizer";
import type { Message } from "../../src/core/messages.ts";
import type { ToolSpec } from "../../src/core/tool_spec.ts";
import {
  estimateMessageTokens,
  estimateRequestTokens,
  estimateTokens,
  MESSAGE_OVERHEAD_TOKENS,
  REQUEST_OVERHEAD_TOKENS,
} from "../../src/context/tokens.ts";
import { loadTokenCorpus, type TokenSample } from "../support/token_corpus.ts";

const TOLERANCE = 0.1;
const corpus = loadTokenCorpus();
const categories = [...new Set(corpus.map((s) => s.category))];

function error(text: string): number {
  const real = countTokens(text);
  return (estimateTokens(text) - real) / real;
}

const sample = (id: string): TokenSample => corpus.find((s) => s.id === id)!;

Deno.test("gpt-tokenizer's default encoding is o200k_base, the one the estimate is fitted to", () => {
  // o200k_base ids; cl100k_base would give [15339, 1917]
  deepEqual(encode("hello world"), [24912, 2375]);
});

Deno.test("the token corpus has several samples of 2-8 KB in each category", () => {
  deepEqual(categories, ["cjk", "code", "json", "mixed", "prose"]);
  for (const category of categories) {
    ok(corpus.filter((s) => s.category === category).length >= 5, category);
  }
  const sizes = corpus.map((s) => new TextEncoder().encode(s.text).length);
  ok(
    sizes.every((n) => n >= 2_000 && n <= 8_192),
    `sizes ${Math.min(...sizes)}..${Math.max(...sizes)}`,
  );
});

for (const category of categories) {
  Deno.test(`estimateTokens() is within 10% of o200k_base on every ${category} sample`, () => {
    const outside = corpus
      .filter((s) => s.category === category)
      .map((s) => ({ id: s.id, error: Math.round(error(s.text) * 1000) / 10 }))
      .filter((s) => Math.abs(s.error) > TOLERANCE * 100);
    deepEqual(outside, []);
  });
}

Deno.test("estimateTokens() is within 10% of o200k_base on each category's total", () => {
  for (const category of categories) {
    const text = corpus.filter((s) => s.category === category).map((s) => s.text).join("\n");
    ok(Math.abs(error(text)) <= TOLERANCE, `${category}: ${(error(text) * 100).toFixed(1)}%`);
  }
});

Deno.test("estimateTokens() is 0 for the empty string and a whole number of at least 1 otherwise", () => {
  equal(estimateTokens(""), 0);
  for (
    const text of ["a", " ", "\n", "。", "😀", "x".repeat(1000), sample("code/ts_read_tool").text]
  ) {
    const tokens = estimateTokens(text);
    ok(
      Number.isInteger(tokens) && tokens >= 1,
      `${tokens} for ${JSON.stringify(text.slice(0, 20))}`,
    );
  }
});

Deno.test("estimateTokens() grows with the text", () => {
  const text = sample("prose/md_design").text;
  let last = 0;
  for (let end = 200; end <= text.length; end += 200) {
    const tokens = estimateTokens(text.slice(0, end));
    // a prefix can end inside a run that the next characters make cheaper, by a token or two
    ok(tokens >= last - 2, `${tokens} tokens for ${end} chars after ${last}`);
    last = tokens;
  }
  const once = estimateTokens(text);
  const twice = estimateTokens(`${text}\n${text}`);
  ok(Math.abs(twice - 2 * once) <= 3, `${twice} for twice the text, ${once} for once`);
});

Deno.test("estimateTokens() counts CJK text several times higher per character than English", () => {
  const perChar = (text: string) => estimateTokens(text) / text.length;
  const english = perChar(sample("prose/md_node_backporting").text);
  for (const id of ["cjk/zh_prose_agent", "cjk/ja_prose_review", "cjk/ko_prose_release"]) {
    const cjk = perChar(sample(id).text);
    ok(cjk > 2 * english, `${id}: ${cjk.toFixed(2)} per char, English ${english.toFixed(2)}`);
  }
  ok(estimateTokens("上下文窗口很快就会被填满。") >= 8);
});

Deno.test("estimateMessageTokens() adds the per-message overhead to the content", () => {
  const content = sample("prose/txt_privacy_notice").text;
  equal(estimateMessageTokens({ role: "user", content: "" }), MESSAGE_OVERHEAD_TOKENS);
  equal(estimateMessageTokens({ role: "user", content }), estimateTokens(content) + 4);
  equal(estimateMessageTokens({ role: "system", content }), estimateTokens(content) + 4);
});

Deno.test("estimateMessageTokens() counts tool call names and arguments, and the tool's name", () => {
  const args = JSON.stringify({ path: "src/session/store.ts", offset: 120, limit: 40 });
  const plain: Message = { role: "assistant", content: "Reading the store." };
  const withCalls: Message = {
    ...plain,
    toolCalls: [
      { id: "call_1", name: "read", arguments: args },
      { id: "call_2", name: "bash", arguments: '{"command":"deno test tests/session/"}' },
    ],
  };
  const calls = 2 * MESSAGE_OVERHEAD_TOKENS + estimateTokens("read") + estimateTokens(args) +
    estimateTokens("bash") + estimateTokens('{"command":"deno test tests/session/"}');
  equal(estimateMessageTokens(withCalls), estimateMessageTokens(plain) + calls);
  ok(calls > 30, `${calls}`);

  const result: Message = { role: "tool", toolCallId: "call_1", name: "read", content: "1\tok" };
  equal(
    estimateMessageTokens(result),
    MESSAGE_OVERHEAD_TOKENS + estimateTokens("1\tok") + estimateTokens("read"),
  );
});

Deno.test("estimateRequestTokens() sums the messages, the tools as JSON and the reply priming", () => {
  const messages: Message[] = [
    { role: "system", content: "You are tern, a coding agent." },
    { role: "user", content: sample("cjk/zh_md_with_code").text },
    { role: "assistant", content: "", toolCalls: [{ id: "c", name: "read", arguments: "{}" }] },
  ];
  const tool: ToolSpec = {
    name: "read",
    description: "Read a text file from the workspace.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  };
  const bare = messages.reduce((n, m) => n + estimateMessageTokens(m), REQUEST_OVERHEAD_TOKENS);
  equal(estimateRequestTokens(messages), bare);
  equal(estimateRequestTokens(messages, []), bare);
  equal(estimateRequestTokens(messages, [tool]), bare + estimateTokens(JSON.stringify(tool)));
  equal(estimateRequestTokens([]), REQUEST_OVERHEAD_TOKENS);
});

Deno.test("estimateRequestTokens() is within 10% of o200k_base plus the same overheads", () => {
  const messages: Message[] = corpus.map((s) => ({ role: "user", content: s.text }));
  const real = messages.reduce(
    (n, m) => n + countTokens(m.content) + MESSAGE_OVERHEAD_TOKENS,
    REQUEST_OVERHEAD_TOKENS,
  );
  const estimated = estimateRequestTokens(messages);
  ok(Math.abs(estimated - real) / real <= TOLERANCE, `${estimated} estimated, ${real} real`);
});

Deno.test("estimateRequestTokens() with a cache gives the same count and estimates each part once", () => {
  const messages: Message[] = [
    { role: "user", content: "read the config and fix the failing test" },
    { role: "assistant", content: "Reading it." },
  ];
  const tool = { name: "read", description: "Read a file", parameters: { type: "object" } };
  const cache = new WeakMap<object, number>();
  const plain = estimateRequestTokens(messages, [tool]);
  equal(estimateRequestTokens(messages, [tool], cache), plain);
  equal(cache.get(messages[0]), estimateMessageTokens(messages[0]));
  // A cached part is not estimated again: a (wrong) cached value shows through.
  cache.set(messages[1], 1000);
  equal(
    estimateRequestTokens(messages, [tool], cache),
    plain - estimateMessageTokens(messages[1]) + 1000,
  );
});
