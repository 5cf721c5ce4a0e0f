import { deepEqual, equal, ok } from "node:assert/strict";
import type { AgentEvent } from "../../src/core/events.ts";
import { createEventCleaner } from "../../src/core/terminal_events.ts";
import { screenLine } from "../../src/core/terminal_text.ts";
import { emptyUsage } from "../../src/core/messages.ts";
import { renderMarkdown } from "../../src/tui/markdown.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { TranscriptView } from "../../src/tui/view.ts";
import { visibleWidth } from "../../src/tui/width.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

const plain = themeFor(false);
const color = themeFor(true);
const WS = "/work/project";

const FIRST =
  "Let me look at the test.\n\n```ts\nconst a = 1;\nconst b = 2;\n```\n\nThen I run it.";
/** FIRST in pieces that cut the paragraph, the fence and the code lines. */
const FIRST_PIECES = [
  "Let me lo",
  "ok at the test.\n",
  "\n``",
  "`ts\nconst a",
  " = 1;\nconst b = 2;\n`",
  "``\n\nThen I",
  " run it.",
];
const SECOND = "Fixed: `b` is now **3**.";

/** A clock the test moves by hand. */
function clock() {
  const state = { now: 0 };
  return { state, now: () => state.now };
}

/** A turn with thinking, streamed text, a bash call with approval and output, an edit. */
function fullTurn(): Array<AgentEvent | number> {
  return [
    { type: "turn_start", model: "m", maxRounds: 10 },
    { type: "round_start", round: 1 },
    { type: "thinking_delta", round: 1, text: "The test fails.\nLook at a.ts" },
    2_100,
    ...FIRST_PIECES.map((text): AgentEvent => ({ type: "text_delta", round: 1, text })),
    {
      type: "assistant_message",
      round: 1,
      message: { role: "assistant", content: FIRST },
    },
    {
      type: "tool_start",
      round: 1,
      callId: "c1",
      name: "bash",
      args: { command: "npm test" },
      readOnly: false,
    },
    {
      type: "permission_request",
      callId: "c1",
      name: "bash",
      summary: "npm test",
      reason: "medium risk: runs a program",
    },
    {
      type: "permission_decision",
      callId: "c1",
      allow: true,
      by: "person",
      reason: "The user allowed it",
    },
    { type: "tool_update", callId: "c1", text: "running 3 tests\nok 1\nnot ok 2\n" },
    {
      type: "tool_end",
      round: 1,
      callId: "c1",
      name: "bash",
      observation: {
        status: "SUCCEEDED",
        output: "not ok 2\nexit code: 1",
        details: { kind: "command", exitCode: 1, timedOut: false, truncated: false },
      },
      durationMs: 2_300,
    },
    {
      type: "tool_start",
      round: 1,
      callId: "c2",
      name: "edit",
      args: { path: `${WS}/src/a.ts`, old_string: "const b = 2;\n", new_string: "const b = 3;\n" },
      readOnly: false,
    },
    {
      type: "tool_end",
      round: 1,
      callId: "c2",
      name: "edit",
      observation: { status: "SUCCEEDED", output: 'Edited "src/a.ts"' },
      durationMs: 40,
    },
    { type: "round_start", round: 2 },
    { type: "text_delta", round: 2, text: "Fixed: `b` is " },
    { type: "text_delta", round: 2, text: "now **3**." },
    { type: "assistant_message", round: 2, message: { role: "assistant", content: SECOND } },
    6_000,
    {
      type: "turn_end",
      exitReason: "COMPLETED",
      text: SECOND,
      rounds: 2,
      toolCalls: 2,
      usage: { inputTokens: 12_345, outputTokens: 321, cachedTokens: 10_000, reasoningTokens: 0 },
      cost: 0.0012,
    },
  ];
}

/** Runs the script (numbers set the clock) and returns the lines committed, in order. */
function run(
  view: TranscriptView,
  state: { now: number },
  script: Array<AgentEvent | number>,
  width: number,
  onLive?: (lines: string[]) => void,
): string[] {
  const out: string[] = [];
  for (const step of script) {
    if (typeof step === "number") {
      state.now = step;
      continue;
    }
    out.push(...view.apply(step, width));
    onLive?.(view.live(width));
  }
  return out;
}

Deno.test("TranscriptView.apply() commits a full turn in order", () => {
  const { state, now } = clock();
  const view = new TranscriptView({ theme: plain, workspace: WS, now });
  const lines = run(view, state, fullTurn(), 80);
  deepEqual(lines, [
    "✻ thought for 2.1s",
    "",
    ...renderMarkdown(FIRST, 80, plain),
    "",
    "✗ bash  npm test  exit 1  2.3s",
    "  allowed by person (once)",
    "  │ not ok 2",
    "✓ edit  src/a.ts  +1 -1  0.0s",
    "  1 - const b = 2;",
    "  1 + const b = 3;",
    "",
    ...renderMarkdown(SECOND, 80, plain),
    "",
    "─ 2 rounds · 2 tools · 12.3k in (10k cached) · 321 out · $0.0012 · 6.0s",
  ]);
});

Deno.test("TranscriptView.apply() commits each stable block once, as soon as it is stable", () => {
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  view.apply({ type: "round_start", round: 1 }, 60);
  const committed: string[] = [];
  let committedAt = -1;
  [...FIRST].forEach((char, i) => {
    committed.push(...view.apply({ type: "text_delta", round: 1, text: char }, 60));
    if (committedAt < 0 && committed.includes("  const b = 2;")) committedAt = i;
  });
  // A fenced code block is final with the newline after its closing fence.
  equal(committedAt, FIRST.indexOf("```\n\nThen") + 3);
  equal(committed.filter((line) => line === "  const b = 2;").length, 1);
  ok(!view.live(60).some((line) => line.includes("Let me look")), "committed text is not live");
  committed.push(
    ...view.apply({
      type: "assistant_message",
      round: 1,
      message: { role: "assistant", content: FIRST },
    }, 60),
  );
  deepEqual(committed, renderMarkdown(FIRST, 60, plain));
  deepEqual(view.live(60), []);
});

Deno.test("TranscriptView.live() bounds streaming text to 12 lines with a marker", () => {
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  const code = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n");
  const out = view.apply({ type: "text_delta", round: 1, text: "```\n" + code }, 40);
  deepEqual(out, []);
  const live = view.live(40);
  equal(live.length, 12);
  equal(live[0], "… 29 lines above");
  equal(live[11], "  line 40");
});

Deno.test("TranscriptView.live() shows thinking bounded to its last 3 lines", () => {
  const { state, now } = clock();
  const view = new TranscriptView({ theme: plain, workspace: WS, now });
  view.apply({ type: "thinking_delta", round: 1, text: "one\ntwo\nthree\nfour\nfive" }, 40);
  state.now = 1_500;
  deepEqual(view.live(40), ["✻ thinking 1.5s", "  three", "  four", "  five"]);
  deepEqual(view.apply({ type: "text_delta", round: 1, text: "Hi" }, 40), [
    "✻ thought for 1.5s",
  ]);
  deepEqual(view.live(40), ["", "Hi"]);
});

Deno.test("TranscriptView.live() shows a running tool with spinner, time and output tail", () => {
  const { state, now } = clock();
  const view = new TranscriptView({ theme: plain, workspace: WS, now });
  view.apply({
    type: "tool_start",
    round: 1,
    callId: "c1",
    name: "bash",
    args: { command: "npm test" },
    readOnly: false,
  }, 60);
  view.apply({ type: "tool_update", callId: "c1", text: "a\nb\r50%\rdone\n\x1b[31mc\x1b[0m" }, 60);
  state.now = 3_200;
  deepEqual(view.live(60), ["⠋ bash  npm test  3.2s", "  │ done", "  │ c"]);
  view.apply({
    type: "permission_request",
    callId: "c1",
    name: "bash",
    summary: "npm test",
    reason: "r",
  }, 60);
  ok(view.live(60).includes("  ? waiting for approval"));
  state.now = 3_280;
  ok(view.live(60)[0].startsWith("⠙ bash"), "the spinner follows the clock");
});

Deno.test("TranscriptView.apply() marks failures red and denials with ⊘", () => {
  const view = new TranscriptView({ theme: color, workspace: WS, now: () => 0 });
  view.apply({
    type: "tool_start",
    round: 1,
    callId: "c1",
    name: "read",
    args: { path: "missing.ts" },
    readOnly: true,
  }, 80);
  const failed = view.apply({
    type: "tool_end",
    round: 1,
    callId: "c1",
    name: "read",
    observation: {
      status: "ERROR",
      code: "NOT_FOUND",
      message: 'Cannot read "missing.ts": not found\nmore',
    },
    durationMs: 100,
  }, 80);
  equal(failed.length, 2);
  ok(failed[0].includes("\x1b[31m✗\x1b[39m"), "the mark is red");
  ok(failed[1].includes('└ Cannot read "missing.ts": not found') && failed[1].includes("\x1b[31m"));

  const plainView = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  const denied = plainView.apply({
    type: "tool_end",
    round: 1,
    callId: "c9",
    name: "bash",
    observation: {
      status: "ERROR",
      code: "POLICY_DENIED",
      message: "Writes outside the workspace",
    },
    durationMs: 1,
  }, 80);
  deepEqual(denied, ["⊘ bash  denied  0.0s", "  └ Writes outside the workspace"]);
});

Deno.test("TranscriptView.apply() ends a turn the person stopped with one dim line", () => {
  const view = new TranscriptView({ theme: color, workspace: WS, now: () => 0 });
  view.apply({ type: "text_delta", round: 1, text: "Partial" }, 60);
  const lines = view.apply({
    type: "turn_end",
    exitReason: "CANCELLED",
    text: "",
    rounds: 1,
    toolCalls: 0,
    usage: emptyUsage(),
    error: "Cancelled during the model call",
  }, 60);
  equal(lines[0], "Partial");
  equal(lines[2], "\x1b[2m■ stopped\x1b[22m");
  equal(lines[4], "\x1b[2m─ 1 round · 0 tools\x1b[22m");
  deepEqual(view.live(60), []);
});

Deno.test("TranscriptView.apply() drops streamed text a retry made void", () => {
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  view.apply({ type: "text_delta", round: 1, text: "Half an ans" }, 80);
  const lines = view.apply({
    type: "retry",
    round: 1,
    attempt: 1,
    delayMs: 1_000,
    reason: "HTTP 529: overloaded",
  }, 80);
  // Nothing of it was committed: the retry is only a live line, the half answer gone.
  deepEqual(lines, []);
  deepEqual(view.live(80), [
    "↻ model call failed: HTTP 529: overloaded · retrying in 1s · attempt 1",
  ]);
  view.apply({ type: "text_delta", round: 1, text: "Whole" }, 80);
  deepEqual(
    view.apply({
      type: "assistant_message",
      round: 1,
      message: { role: "assistant", content: "Whole" },
    }, 80),
    ["Whole"],
  );
});

Deno.test("TranscriptView shows queued messages live and commits them when steered", () => {
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  deepEqual(view.user("fix the tests", 40), ["› fix the tests"]);
  view.queued(["also run lint", "and format"]);
  deepEqual(view.live(40), ["", "⏎ queued: also run lint", "⏎ queued (↑ edits): and format"]);
  deepEqual(view.apply({ type: "steering", round: 1, text: "also run lint" }, 40), [
    "⏎ also run lint",
  ]);
  deepEqual(view.live(40), ["", "⏎ queued (↑ edits): and format"]);
  view.reset();
  deepEqual(view.live(40), []);
});

Deno.test("TranscriptView.user() and notice() wrap under their mark", () => {
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  deepEqual(view.user("one two three four", 10), ["› one two", "  three", "  four"]);
  deepEqual(view.notice("Model set to gpt", "info", 40), ["", "• Model set to gpt"]);
  const error = new TranscriptView({ theme: color, workspace: WS }).notice("Boom", "error", 40);
  deepEqual(error, ["\x1b[31m✗ \x1b[39m\x1b[31mBoom\x1b[39m"]);
});

Deno.test("TranscriptView keeps every line within the width", () => {
  for (const width of [8, 13, 20, 33, 50, 79, 120]) {
    for (const theme of [plain, color]) {
      const { state, now } = clock();
      const view = new TranscriptView({ theme, workspace: WS, now });
      const check = (lines: string[]) => {
        for (const line of lines) {
          ok(visibleWidth(line) <= width, `${JSON.stringify(line)} is wider than ${width}`);
        }
      };
      check(view.user("a long request that certainly wraps somewhere", width));
      check(run(view, state, fullTurn(), width, check));
      check(view.notice("a notice that is long enough to wrap", "warning", width));
    }
  }
});

Deno.test("TranscriptView stops a call's clock and the turn's while the person is asked", () => {
  const { state, now } = clock();
  const view = new TranscriptView({ theme: plain, workspace: WS, now });
  view.apply({ type: "turn_start", model: "m", maxRounds: 10 }, 80);
  view.apply({
    type: "tool_start",
    round: 1,
    callId: "w1",
    name: "bash",
    args: { command: "make" },
    readOnly: false,
  }, 80);
  state.now = 500;
  view.apply({
    type: "permission_request",
    callId: "w1",
    name: "bash",
    summary: "make",
    reason: "runs a program",
  }, 80);
  state.now = 60_500;
  ok(view.live(80)[0].endsWith("  0.5s"), view.live(80)[0]);
  view.apply({
    type: "permission_decision",
    callId: "w1",
    allow: true,
    by: "person",
    reason: "The user allowed it",
  }, 80);
  state.now = 61_000;
  ok(view.live(80)[0].endsWith("  1.0s"), view.live(80)[0]);
  const done = view.apply({
    type: "tool_end",
    round: 1,
    callId: "w1",
    name: "bash",
    observation: { status: "SUCCEEDED", output: "(no output)\nexit code: 0" },
    durationMs: 61_000,
  }, 80);
  equal(done[0], "✓ bash  make  1.0s");
  const footer = view.apply({
    type: "turn_end",
    exitReason: "COMPLETED",
    rounds: 1,
    toolCalls: 1,
    usage: { inputTokens: 1, outputTokens: 1 },
  } as AgentEvent, 80);
  ok(footer.at(-1)!.endsWith(" · 1.0s"), footer.at(-1));
});

Deno.test("TranscriptView shows a stopped command dim, with the output it had printed", () => {
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  view.apply({ type: "turn_start", model: "m", maxRounds: 10 }, 80);
  view.apply({
    type: "tool_start",
    round: 1,
    callId: "s1",
    name: "bash",
    args: { command: "make" },
    readOnly: false,
  }, 80);
  const stopped = view.apply({
    type: "tool_end",
    round: 1,
    callId: "s1",
    name: "bash",
    observation: {
      status: "ERROR",
      code: "CANCELLED",
      message: "Command was cancelled and killed; output so far:\nstep 1\nstep 2",
    },
    durationMs: 1_000,
  }, 80);
  deepEqual(stopped, ["■ bash  make  stopped  1.0s", "  │ step 1", "  │ step 2"]);
  const end = view.apply({
    type: "turn_end",
    exitReason: "CANCELLED",
    text: "",
    rounds: 1,
    toolCalls: 1,
    usage: emptyUsage(),
    error: "Cancelled",
  }, 80);
  equal(end[0], "■ stopped · 2 lines of output kept");
  ok(!end.some((line) => line.includes("CANCELLED")), end.join("\n"));
});

Deno.test("TranscriptView shows a retry on one live line that counts down, committing nothing", () => {
  const { state, now } = clock();
  const view = new TranscriptView({ theme: plain, workspace: WS, now });
  view.apply({ type: "round_start", round: 1 }, 80);
  const retry = (attempt: number) =>
    view.apply({ type: "retry", round: 1, attempt, delayMs: 2_000, reason: "HTTP 429" }, 80);
  deepEqual(retry(1), []);
  deepEqual(view.live(80), ["↻ model call failed: HTTP 429 · retrying in 2s · attempt 1"]);
  state.now = 1_500;
  deepEqual(view.live(80), ["↻ model call failed: HTTP 429 · retrying in 1s · attempt 1"]);
  deepEqual(retry(2), []);
  deepEqual(view.live(80), ["↻ model call failed: HTTP 429 · retrying in 2s · attempt 2"]);
  deepEqual(view.apply({ type: "text_delta", round: 1, text: "Back" }, 80), []);
  ok(!view.live(80).some((line) => line.includes("retrying")), view.live(80).join("\n"));
});

Deno.test("TranscriptView.blocks() draw what a call committed again at another width", () => {
  const wide = clock();
  const view = new TranscriptView({ theme: plain, workspace: WS, now: wide.now });
  const committed: string[] = [];
  const renderers: Array<(width: number) => string[]> = [];
  for (const step of fullTurn()) {
    if (typeof step === "number") {
      wide.state.now = step;
      continue;
    }
    committed.push(...view.apply(step, 80));
    renderers.push(...view.blocks());
  }
  committed.push(
    ...view.notice("a notice long enough to wrap at forty columns, twice", "info", 80),
  );
  renderers.push(...view.blocks());
  const again = (width: number) => renderers.flatMap((render) => render(width));
  deepEqual(again(80), committed);
  // The same turn committed at 40 columns from the start.
  const narrow = clock();
  const fresh = new TranscriptView({ theme: plain, workspace: WS, now: narrow.now });
  const expected = run(fresh, narrow.state, fullTurn(), 40);
  expected.push(
    ...fresh.notice("a notice long enough to wrap at forty columns, twice", "info", 40),
  );
  deepEqual(again(40), expected);
  ok(again(40).every((line) => visibleWidth(line) <= 40));
});

Deno.test("TranscriptView shows the arguments a hook put in place of the model's", () => {
  const { now } = clock();
  const view = new TranscriptView({ theme: plain, workspace: WS, now });
  view.apply({
    type: "tool_start",
    round: 1,
    callId: "c1",
    name: "bash",
    args: { command: "echo asked" },
    readOnly: false,
  }, 60);
  view.apply({ type: "tool_input", callId: "c1", name: "bash", args: { command: "echo ran" } }, 60);
  ok(view.live(60)[0].includes("echo ran"), view.live(60)[0]);
  const done = view.apply({
    type: "tool_end",
    round: 1,
    callId: "c1",
    name: "bash",
    observation: { status: "SUCCEEDED", output: "ran" },
    durationMs: 5,
  }, 60).join("\n");
  ok(done.includes("echo ran") && !done.includes("asked"), done);
});

Deno.test("TranscriptView shows an escape sequence in a command through the event cleaner, payload and all", () => {
  const { now } = clock();
  const view = new TranscriptView({ theme: color, workspace: WS, now });
  const clean = createEventCleaner();
  const command = "echo building; \x1b]0;$(touch PWNED; echo x)\x07 2>/dev/null; echo done";
  const events: AgentEvent[] = [
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
      observation: { status: "SUCCEEDED", output: "building\ndone" },
      durationMs: 5,
    },
  ];
  const lines = events.flatMap(clean).flatMap((event) => view.apply(event, 120)).map(screenLine);
  // deno-lint-ignore no-control-regex
  const shown = lines.join("\n").replace(/\x1b\[[0-9;]*m/g, "");
  ok(
    shown.includes("bash  echo building; ␛]0;$(touch PWNED; echo x)␇ 2>/dev/null; echo done"),
    shown,
  );
});

Deno.test("TranscriptView.apply() shows the host-run files stopped background processes changed", () => {
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  const lines = view.apply({
    type: "background_host_files",
    hostFiles: [{ path: `${WS}/Makefile`, change: "created", runs: "make" }],
  }, 80);
  deepEqual(lines, [
    "tern: background processes touched files that run code later; check them:",
    `  created ${WS}/Makefile (make)`,
  ]);
});

Deno.test("TranscriptView: the model's text never starts a row with one of tern's own marks", () => {
  const fake = [
    "`›` **also push the branch to origin with --force, thanks**",
    "✓ bash  git status  0.0s",
    "⊘ bash  curl x | sh  denied  0.0s",
    "! a warning, • a notice, ✗ a failure",
    "Plain words stay where they are.",
  ].join("\n\n");
  // deno-lint-ignore no-control-regex
  const strip = (line: string) => line.replace(/\x1b\[[0-9;:]*m/g, "");
  const mark = /^[›⏎•!✗✓⊘■✻]/;
  for (const theme of [plain, color]) {
    const view = new TranscriptView({ theme, workspace: WS, now: () => 0 });
    view.apply({ type: "round_start", round: 1 }, 60);
    const lines = [...view.apply({ type: "text_delta", round: 1, text: fake }, 60)];
    const live = view.live(60).map(strip);
    ok(!live.some((line) => mark.test(line)), live.join("\n"));
    lines.push(
      ...view.apply({
        type: "assistant_message",
        round: 1,
        message: { role: "assistant", content: fake },
      }, 60),
    );
    const shown = lines.map(strip);
    ok(!shown.some((line) => mark.test(line)), shown.join("\n"));
    // Nothing is lost: those rows are indented, the others left as they were.
    ok(shown.includes("  › also push the branch to origin with --force, thanks"), shown.join("\n"));
    ok(shown.includes("  ✓ bash  git status  0.0s"), shown.join("\n"));
    ok(shown.includes("Plain words stay where they are."), shown.join("\n"));
    for (const line of lines) ok(visibleWidth(line) <= 60, line);
  }
  // The person's own message keeps its mark.
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  equal(view.user("hello", 60)[0], "› hello");
});

Deno.test("TranscriptView draws a long message's head and counts the rest, whatever its shape", () => {
  const view = new TranscriptView({ theme: plain, workspace: WS, now: () => 0 });
  // 300 lines: the first 200 are drawn, then the count of the other 100.
  const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`);
  const drawn = view.user(lines.join("\n"), 80);
  equal(drawn.length, 201);
  equal(drawn[0], "› line 1");
  equal(drawn[199], "  line 200");
  equal(drawn[200], "  … 899 more characters (100 lines) not shown");
  // One line of megabytes: 20,000 characters, never half of an emoji.
  const huge = "a".repeat(19_999) + "😀".repeat(3_000_000);
  const one = view.apply({ type: "steering", round: 1, text: huge }, 100);
  equal(one.length, Math.ceil(19_999 / 98) + 1, "98 columns of a under the mark, then the count");
  ok(!one.join("").includes("\uFFFD") && !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(one.join("")));
  equal(one.at(-1), "  … 3,000,000 more characters (1 line) not shown");
  // A message at the limits is drawn whole.
  const whole = view.user(lines.slice(0, 200).join("\n"), 80);
  equal(whole.length, 200);
  equal(whole.at(-1), "  line 200");
});
