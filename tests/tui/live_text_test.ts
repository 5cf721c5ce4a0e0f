import { deepEqual, equal } from "node:assert/strict";
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
  deepEqual(markdownTail(text, 5), { tail: `~~~~py\n${numbered(26, 30)}`, skipped: 27 });
  const closed = `\`\`\`\n${numbered(1, 3)}\n\`\`\`\n\n${numbered(4, 30)}`;
  deepEqual(markdownTail(closed, 2), { tail: numbered(29, 30), skipped: 31 });
  deepEqual(markdownTail("short", 5), { tail: "short", skipped: 0 });
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
