import { deepEqual, equal, ok } from "node:assert/strict";
import { liveMarkdown, markdownTail } from "../../src/tui/live_text.ts";
import { renderMarkdown } from "../../src/tui/markdown.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

const plain = themeFor(false);
const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`).join("\n");

Deno.test("markdownTail() keeps the opening fence of a code block it cuts into", () => {
  const text = `Intro\n\n~~~~py\n${numbered(1, 30)}`;
  deepEqual(markdownTail(text, 5), {
    tail: `~~~~py\n${numbered(26, 30)}`,
    skipped: 27,
    cut: 0,
  });
  const closed = `\`\`\`\n${numbered(1, 3)}\n\`\`\`\n\n${numbered(4, 30)}`;
  deepEqual(markdownTail(closed, 2), { tail: numbered(29, 30), skipped: 31, cut: 0 });
  deepEqual(markdownTail("short", 5), { tail: "short", skipped: 0, cut: 0 });
});

Deno.test("liveMarkdown() shows the end of the rendering under a count of what is above", () => {
  const text = `\`\`\`ts\n${numbered(1, 50)}`;
  const whole = renderMarkdown(text, 40, plain);
  const live = liveMarkdown(text, 40, plain, 12);
  equal(live.length, 12);
  deepEqual(live.slice(1), whole.slice(-11));
  equal(live[0], `… ${whole.length - 11} lines above`);
  deepEqual(liveMarkdown("Just *this*", 40, plain, 12), ["Just this"]);
});

Deno.test("markdownTail() keeps at most maxChars characters, an open fence line first", () => {
  const long = "word ".repeat(1_000);
  deepEqual(markdownTail(`intro\n\n${long}`, 5, { maxChars: 100 }), {
    tail: long.slice(-100),
    skipped: 0,
    cut: 5_007 - 100,
  });
  const code = "```sh\n" + "x".repeat(1_000);
  deepEqual(markdownTail(code, 5, { maxChars: 100 }), {
    tail: "```sh\n" + "x".repeat(94),
    skipped: 0,
    cut: 906,
  });
  // Never half a surrogate pair.
  const emoji = markdownTail("👍".repeat(100), 5, { maxChars: 51 });
  equal(emoji.tail, "👍".repeat(25));
});

Deno.test("liveMarkdown() renders the end of a long unfinished paragraph under a note", () => {
  // A megabyte of one paragraph, and a flood of joiners: each frame renders a bounded part.
  for (const text of ["word ".repeat(200_000), "a\u200d".repeat(60_000)]) {
    const live = liveMarkdown(text, 80, plain, 12);
    ok(live.length <= 12, `${live.length}`);
    ok(/^… (\d+ lines? and )?[\d,.k]+ characters above$/.test(live[0]), live[0]);
    ok(live.slice(1).join("").length <= 4 * 12 * 80, "at most the characters rendered");
  }
  // A short paragraph is rendered whole, with no note.
  deepEqual(liveMarkdown("word ".repeat(10).trim(), 80, plain, 12), [
    "word ".repeat(10).trim(),
  ]);
});
