import { deepEqual, equal, ok } from "node:assert/strict";
import { formatDuration, formatTokens } from "../../src/tui/format.ts";
import { formatCost } from "../../src/llm/model_info.ts";
import { type StatusInfo, statusLine } from "../../src/tui/status.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { visibleWidth } from "../../src/tui/width.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

const plain = themeFor(false);
const color = themeFor(true);

const INFO: StatusInfo = {
  cwd: "/home/ada/src/projects/tern",
  home: "/home/ada",
  model: "gpt-5",
  provider: "openai",
  thinking: "high",
  mode: "ask",
  profile: ":workspace",
  sandbox: "bubblewrap",
  contextPercent: 42,
  tokens: 12_345,
  cost: 0.0123,
  busy: "working 3.2s",
  hint: "esc to interrupt",
};

Deno.test("statusLine() shows every part when there is room", () => {
  deepEqual(statusLine(INFO, 200, plain), [
    "~/src/projects/tern · gpt-5 · openai · think high · ask · :workspace · bwrap · ctx 42% · " +
    "12.3k tok · $0.0123 · working 3.2s · esc to interrupt",
  ]);
});

Deno.test("statusLine() drops the least important parts first as the width shrinks", () => {
  // While busy the key hint goes after the settings, before only the context share.
  const order = ["$0.0123", "12.3k tok", "openai", "think high", "bwrap", "esc to interrupt"];
  let narrowest = "";
  for (let width = 200; width >= 20; width--) {
    const [line, ...more] = statusLine(INFO, width, plain);
    deepEqual(more, [], "one line");
    ok(visibleWidth(line) <= width, `${JSON.stringify(line)} is wider than ${width}`);
    // Once a part is gone, every part before it in the order is gone too.
    const gone = order.map((part) => !line.includes(part));
    for (let i = 1; i < order.length; i++) {
      if (gone[i]) ok(gone[i - 1], `"${order[i]}" went before "${order[i - 1]}" at ${width}`);
    }
    if (width >= 40) ok(line.includes("gpt-5") && line.includes("working 3.2s"), line);
    narrowest = line;
  }
  ok(narrowest.startsWith("gpt-5"), narrowest);
});

Deno.test("statusLine() keeps the busy state's key hint over the settings, not when idle", () => {
  const busy = statusLine(INFO, 60, plain)[0];
  ok(busy.includes("working 3.2s") && busy.includes("esc to interrupt"), busy);
  ok(!busy.includes(":workspace"), busy);
  const idle = statusLine({ ...INFO, busy: undefined }, 60, plain)[0];
  ok(!idle.includes("esc to interrupt") && idle.includes("ask"), idle);
});

Deno.test("statusLine() shortens the home folder to ~ and elides the middle", () => {
  equal(statusLine({ ...INFO, cwd: "/home/ada" }, 200, plain)[0].split(" · ")[0], "~");
  equal(statusLine({ ...INFO, home: undefined }, 200, plain)[0].split(" · ")[0], INFO.cwd);
  const cwd = "/home/ada/some/deeply/nested/folder/of/the/project";
  const line = statusLine({ ...INFO, cwd, hint: undefined }, 70, plain)[0];
  const shown = line.split(" · ")[0];
  ok(shown.startsWith("~/") && shown.includes("…") && shown.endsWith("project"), shown);
});

Deno.test("statusLine() keeps an unsandboxed warning in red at any width", () => {
  for (const width of [200, 60, 40]) {
    const line = statusLine({ ...INFO, sandbox: "unsandboxed" }, width, color)[0];
    ok(line.includes("\x1b[31munsandboxed\x1b[39m"), line);
  }
});

Deno.test("statusLine() colours the context share above 80%", () => {
  ok(statusLine({ ...INFO, contextPercent: 91 }, 200, color)[0].includes("\x1b[33mctx 91%"));
  ok(statusLine({ ...INFO, contextPercent: 97 }, 200, color)[0].includes("\x1b[31mctx 97%"));
  ok(statusLine(INFO, 200, color)[0].includes("\x1b[2mctx 42%"));
});

Deno.test("formatTokens(), formatCost() and formatDuration() read at a glance", () => {
  deepEqual(
    [842, 1_234, 12_345, 123_456, 1_234_567].map(formatTokens),
    ["842", "1.2k", "12.3k", "123k", "1.2M"],
  );
  deepEqual([0.0123, 0.00042, 2.5].map(formatCost), ["$0.0123", "$0.0004", "$2.50"]);
  deepEqual([40, 3_210, 125_000, 3_725_000].map(formatDuration), [
    "0.0s",
    "3.2s",
    "2m05s",
    "1h02m",
  ]);
});

Deno.test("statusLine() shows the last request's cache hits", () => {
  const line = statusLine({ ...INFO, cachePercent: 79.6 }, 300, plain)[0];
  ok(line.includes(" · cache 80%"), line);
});
