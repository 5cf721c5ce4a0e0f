/**
 * Content for the TUI benchmarks (bench/tui_frame_bench.ts): assistant answers in Markdown of a
 * given length and whole agent turns (streamed text, read / bash / edit tool calls), the same on
 * every run.
 */
import type { AgentEvent } from "../src/core/events.ts";

const WORKSPACE = "/work/project";

/** One answer's worth of blocks, cycled: heading, prose, list, code, table. */
const BLOCKS = [
  "## Why the test fails",
  "The parser reads the header once — before the body arrives — so `readHeader()` sees an\n" +
  "empty buffer and returns **undefined**. The fix is to wait for the first chunk; see\n" +
  "[the stream docs](https://example.com/streams) for the contract it relies on.",
  "- move the read into `parse()`, after the first chunk\n" +
  "- keep `Header` immutable: build it once\n" +
  "- add a test for an empty body\n" +
  "- drop the retry in `client.ts`, it hid the bug",
  "```ts\n// step STEP\nexport function parse(chunks: string[]): Header {\n" +
  "  const first = chunks.find((chunk) => chunk.length > 0);\n" +
  '  if (first === undefined) throw new Error("Cannot parse: empty body");\n' +
  '  const [name, value] = first.split(":", 2);\n' +
  '  return { name: name.trim(), value: value?.trim() ?? "" };\n}\n```',
  "| file | change | lines |\n| --- | --- | --- |\n| src/parse.ts | read after first chunk | +6 -2 |\n" +
  "| src/client.ts | drop the retry | -9 |\n| tests/parse_test.ts | empty body | +14 |",
  "After the change, `deno test` passes: 42 tests, 0 failures. Nothing else reads the header\n" +
  "early, as far as I can see (I searched for `readHeader(` in src/ and tests/).",
];

/**
 * A Markdown answer of at least `lines` source lines (blocks separated by blank lines). Each code
 * block starts with a `// step N` comment, so no two blocks in one answer are the same.
 */
export function answer(lines: number): string {
  const out: string[] = [];
  for (let i = 0; out.length < lines; i++) {
    if (out.length > 0) out.push("");
    out.push(...BLOCKS[i % BLOCKS.length].replace("STEP", String(i)).split("\n"));
  }
  return out.join("\n");
}

/** `text` cut into pieces of about `size` characters, as a model streams it. */
export function tokens(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const USAGE = { inputTokens: 12_345, outputTokens: 321, cachedTokens: 10_000, reasoningTokens: 0 };

/** A whole turn (number `n`): a streamed answer, three tool calls, a closing answer. */
export function turnEvents(n: number): AgentEvent[] {
  const text = answer(40);
  const diff = "@@ -1,4 +1,6 @@\n-const a = 1;\n+const a = 2;\n+const b = 3;\n context\n" +
    "-old line\n+new line\n+another line\n more context";
  const output = Array.from({ length: 30 }, (_, i) => `ok ${i + 1} - parse case ${i + 1}`);
  return [
    { type: "turn_start", model: "bench", maxRounds: 20 },
    { type: "round_start", round: 1 },
    ...tokens(text, 24).map((piece): AgentEvent => ({ type: "text_delta", round: 1, text: piece })),
    { type: "assistant_message", round: 1, message: { role: "assistant", content: text } },
    tool(`r${n}`, "read", { path: `${WORKSPACE}/src/parse.ts` }, {
      status: "SUCCEEDED",
      output: "export function parse() {}\n".repeat(40),
      details: { kind: "file", path: `${WORKSPACE}/src/parse.ts`, lines: 40, truncated: false },
    }),
    tool(`b${n}`, "bash", { command: "deno test tests/parse_test.ts" }, {
      status: "SUCCEEDED",
      output: output.join("\n"),
      details: { kind: "command", exitCode: 0, timedOut: false, truncated: false },
    }),
    tool(`e${n}`, "edit", {
      path: `${WORKSPACE}/src/parse.ts`,
      old_string: "const a = 1;",
      new_string: "const a = 2;",
    }, {
      status: "SUCCEEDED",
      output: 'Edited "src/parse.ts"',
      details: { kind: "diff", path: `${WORKSPACE}/src/parse.ts`, diff },
    }),
    { type: "round_start", round: 2 },
    { type: "text_delta", round: 2, text: "Done: the parser now waits for the first chunk." },
    {
      type: "assistant_message",
      round: 2,
      message: { role: "assistant", content: "Done: the parser now waits for the first chunk." },
    },
    {
      type: "turn_end",
      exitReason: "COMPLETED",
      text: "Done",
      rounds: 2,
      toolCalls: 3,
      usage: USAGE,
      cost: 0.0012,
    },
  ].flat() as AgentEvent[];
}

function tool(
  callId: string,
  name: string,
  args: Record<string, unknown>,
  observation: Extract<AgentEvent, { type: "tool_end" }>["observation"],
): AgentEvent[] {
  return [
    { type: "tool_start", round: 1, callId, name, args, readOnly: name === "read" },
    { type: "tool_end", round: 1, callId, name, observation, durationMs: 420 },
  ];
}

/** The workspace the events' paths are in. */
export const BENCH_WORKSPACE = WORKSPACE;
