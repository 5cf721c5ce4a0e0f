/**
 * In-process cost of the interactive UI's frames (issue 6): the real controller
 * (`InteractiveApp`) with the real `KeyDecoder`, `Editor`, `TranscriptView`, status line and
 * `Screen`, drawing into a writer that only encodes and counts bytes (as `terminal.ts` encodes
 * before writing). 100×30 terminal, colour theme, syntax highlighter loaded.
 *
 * - keystroke: raw bytes of one printable key → decoder → editor → frame written, with an empty
 *   transcript, with 2,000 committed lines above, and with those plus a streaming answer and a
 *   running tool in the live region
 * - stream frame: one streamed `text_delta` → view (committing finished blocks) → frame written,
 *   with an empty transcript and with 2,000 committed transcript lines above the live region
 * - renderMarkdown of a 200-line answer; TranscriptView.apply of a text_delta while a 400-line
 *   answer is still streaming (nothing of it stable yet)
 *
 * Run with `deno bench --allow-read --allow-write bench/tui_frame_bench.ts` (part of
 * `deno task bench`). Results: bench/results/tui.md.
 */
import { type AppScreen, InteractiveApp } from "../src/cli/interactive/app.ts";
import { CommandRegistry } from "../src/cli/interactive/commands.ts";
import type { AgentEvent } from "../src/core/events.ts";
import { Editor } from "../src/tui/editor.ts";
import { KeyDecoder } from "../src/tui/keys.ts";
import { loadHighlighter, renderMarkdown } from "../src/tui/markdown.ts";
import { Screen } from "../src/tui/screen.ts";
import type { StatusInfo } from "../src/tui/status.ts";
import { themeFor } from "../src/tui/theme.ts";
import { TranscriptView } from "../src/tui/view.ts";
import { truncateToWidth, visibleWidth, wrapText } from "../src/tui/width.ts";
import { answer, BENCH_WORKSPACE, tokens, turnEvents } from "./_tui_corpus.ts";
import { loadRenderers } from "../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

const COLUMNS = 100;
const ROWS = 30;
const theme = themeFor(true);
const encoder = new TextEncoder();

// One-time costs, before anything below warms them up: the first non-ASCII or emoji text
// through the width libraries compiles their Unicode property regexes.
const firstUse = (name: string, run: () => unknown) => {
  const start = performance.now();
  run();
  return `${name} ${(performance.now() - start).toFixed(1)} ms`;
};
console.log(
  "first use in this process:",
  [
    firstUse("visibleWidth(non-ASCII)", () => visibleWidth("naïve — ok")),
    firstUse("wrapText(non-ASCII)", () => wrapText("naïve — ok", 4)),
    firstUse("truncateToWidth(non-ASCII)", () => truncateToWidth("naïve — ok ✓", 6)),
    firstUse("visibleWidth(emoji)", () => visibleWidth("ok 👍")),
    firstUse("wrapText(emoji)", () => wrapText("ok 👍 fine", 4)),
  ].join(", "),
);

await loadHighlighter();

const STATUS: StatusInfo = {
  cwd: `${BENCH_WORKSPACE}/packages/parser`,
  home: "/home/someone",
  model: "claude-sonnet-4-5",
  provider: "anthropic",
  thinking: "medium",
  mode: "ask",
  profile: ":workspace",
  sandbox: "bubblewrap",
};

/** The controller and its parts, drawing into a byte counter. */
interface Rig {
  app: InteractiveApp;
  view: TranscriptView;
  decoder: KeyDecoder;
  out: { bytes: number; writes: number; committed: number };
}

function rig(): Rig {
  const out = { bytes: 0, writes: 0, committed: 0 };
  const screen = new Screen(
    {
      write(text) {
        out.bytes += encoder.encode(text).length;
        out.writes++;
      },
    },
    { columns: COLUMNS, rows: ROWS },
    { synchronized: true },
  );
  const appScreen: AppScreen = {
    commit(lines) {
      out.committed += lines.length;
      screen.commit(lines);
    },
    render: (lines, cursor) => screen.render(lines, cursor),
    columns: () => COLUMNS,
  };
  const commands = new CommandRegistry(
    ["help", "model", "thinking", "mode", "new", "resume", "tree", "quit"].map((name) => ({
      name,
      description: `the ${name} command`,
      run: () => {},
    })),
  );
  const view = new TranscriptView({ theme, workspace: BENCH_WORKSPACE });
  const app = new InteractiveApp({
    screen: appScreen,
    theme,
    view,
    editor: new Editor({ commands: () => commands.list() }),
    commands,
    status: () => STATUS,
    contextWindow: () => 200_000,
    commandContext: () => {
      throw new Error("The benchmark runs no commands");
    },
    conversation: () => Promise.reject(new Error("The benchmark has no conversation")),
    prepareMessage: (text) => Promise.resolve({ text, notes: [] }),
    onExit: () => {},
  });
  app.frame();
  return { app, view, decoder: new KeyDecoder(), out };
}

/** Feeds raw terminal input through the decoder to the app, as display.ts does. */
function press(r: Rig, input: string): void {
  for (const event of r.decoder.feed(encoder.encode(input))) r.app.key(event);
}

/** Commits whole turns (a user line, streamed answers, tool calls) until `lines` are in. */
function fillTranscript(r: Rig, lines: number): Rig {
  for (let n = 0; r.out.committed < lines; n++) {
    r.app.print(r.view.user(`look at parse.ts again (${n})`, COLUMNS));
    for (const event of turnEvents(n)) r.app.event(event);
  }
  return r;
}

const delta = (text: string): AgentEvent => ({ type: "text_delta", round: 1, text });

/** A bench body that streams a 400-line answer token by token, one frame per token. */
function streaming(r: Rig) {
  const pieces = tokens(answer(400));
  let next = 0;
  r.app.event({ type: "round_start", round: 1 });
  return (b: Deno.BenchContext) => {
    if (next === pieces.length) {
      const content = pieces.join("");
      r.app.event({ type: "assistant_message", round: 1, message: { role: "assistant", content } });
      r.app.event({ type: "round_start", round: 1 });
      next = 0;
    }
    b.start();
    r.app.event(delta(pieces[next++]));
    r.app.frame();
    b.end();
  };
}

const PROMPT = "fix the failing test in src/parse.ts pl";

const typing = rig();
press(typing, PROMPT);
/** Enough iterations that JIT warm-up and GC pauses average out the same way in each case. */
const STEADY = { warmup: 2_000, n: 10_000 };

Deno.bench("keystroke → frame, empty transcript", {
  group: "keystroke",
  baseline: true,
  ...STEADY,
}, (b) => {
  b.start();
  press(typing, "e");
  b.end();
  press(typing, "\x7f");
});

const idle = fillTranscript(rig(), 2_000);
console.log(`transcript above the live region: ${idle.out.committed} lines committed`);
press(idle, PROMPT);
Deno.bench("keystroke → frame, 2,000 transcript lines above", {
  group: "keystroke",
  ...STEADY,
}, (b) => {
  b.start();
  press(idle, "e");
  b.end();
  press(idle, "\x7f");
});

// While a turn runs: streaming text and a running tool in the live region as well.
const busy = fillTranscript(rig(), 2_000);
busy.app.event({ type: "round_start", round: 1 });
busy.app.event(delta(answer(8) + "\n\nNow I run the tests"));
busy.app.event({
  type: "tool_start",
  round: 1,
  callId: "t",
  name: "bash",
  args: { command: "deno test" },
  readOnly: false,
});
busy.app.event({ type: "tool_update", callId: "t", text: "running 42 tests\nok 1\nok 2\n" });
press(busy, PROMPT);
Deno.bench("keystroke → frame, 2,000 lines above, answer and tool live", {
  group: "keystroke",
  ...STEADY,
}, (b) => {
  b.start();
  press(busy, "e");
  b.end();
  press(busy, "\x7f");
});

Deno.bench("stream delta → frame, empty transcript", {
  group: "stream frame",
  baseline: true,
  ...STEADY,
}, streaming(rig()));
Deno.bench(
  "stream delta → frame, 2,000 transcript lines above",
  { group: "stream frame", ...STEADY },
  streaming(fillTranscript(rig(), 2_000)),
);

const ANSWER_200 = answer(200);
let run = 0;
Deno.bench("renderMarkdown(), 200-line answer, highlight cache warm", {
  group: "markdown",
  baseline: true,
}, () => {
  renderMarkdown(ANSWER_200, COLUMNS, theme);
});
Deno.bench("renderMarkdown(), 200-line answer, every code block new", {
  group: "markdown",
}, () => {
  renderMarkdown(ANSWER_200.replaceAll("// step ", `// run ${run++} step `), COLUMNS, theme);
});

/** A view with `text` streamed but unfinished; rebuilt (untimed) every 100 deltas. */
function inProgress(text: string, piece: string, withLive: boolean) {
  let view = new TranscriptView({ theme, workspace: BENCH_WORKSPACE });
  let count = 0;
  return (b: Deno.BenchContext) => {
    if (count++ % 100 === 0) {
      view = new TranscriptView({ theme, workspace: BENCH_WORKSPACE });
      view.apply({ type: "round_start", round: 1 }, COLUMNS);
      view.apply(delta(text), COLUMNS);
    }
    b.start();
    view.apply(delta(piece), COLUMNS);
    if (withLive) view.live(COLUMNS);
    b.end();
  };
}

const CODE_400 = "```ts\n" +
  Array.from({ length: 399 }, (_, i) => `  const value${i} = compute(${i}); // step ${i}`)
    .join("\n") +
  "\n";
const LIST_400 = Array.from({ length: 400 }, (_, i) => `- item ${i}: check \`case${i}\``)
  .join("\n") + "\n";
Deno.bench("TranscriptView.apply(text_delta), 400-line code block streaming", {
  group: "view",
  baseline: true,
}, inProgress(CODE_400, "  const x = 1; ", false));
Deno.bench(
  "TranscriptView.apply(text_delta), 400-line list streaming",
  { group: "view" },
  inProgress(LIST_400, "more ", false),
);
Deno.bench(
  "TranscriptView.apply(text_delta) + live(), 400-line code block streaming",
  { group: "view" },
  inProgress(CODE_400, "  const x = 1; ", true),
);

// What one frame writes to the terminal.
const bytesOf = (r: Rig, act: () => void) => {
  const before = r.out.bytes;
  act();
  return r.out.bytes - before;
};
const sample = rig();
press(sample, PROMPT);
const keyBytes = bytesOf(sample, () => press(sample, "e"));
sample.app.event({ type: "round_start", round: 1 });
sample.app.event(delta("Streaming a paragraph that"));
sample.app.frame();
const streamBytes = bytesOf(sample, () => {
  sample.app.event(delta(" goes on"));
  sample.app.frame();
});
console.log(`bytes written: keystroke frame ${keyBytes}, stream frame ${streamBytes}`);
