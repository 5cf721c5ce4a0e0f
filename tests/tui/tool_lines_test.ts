import { deepEqual, equal, ok } from "node:assert/strict";
import type { ToolDetails } from "../../src/core/observation.ts";
import { unifiedDiff } from "../../src/tui/diff_view.ts";
import { themeFor } from "../../src/tui/theme.ts";
import {
  decisionText,
  finishedToolLines,
  runningToolLines,
  summarizeArgs,
} from "../../src/tui/tool_lines.ts";
import { visibleWidth } from "../../src/tui/width.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

const plain = themeFor(false);
const WS = "/work/project";
const options = { width: 80, theme: plain, workspace: WS };

Deno.test("summarizeArgs() shows the telling argument of each built-in tool", () => {
  const cases: Array<[string, unknown, string]> = [
    ["read", { path: `${WS}/src/a.ts` }, "src/a.ts"],
    ["read", { path: "src/a.ts", offset: 40, limit: 10 }, "src/a.ts:40"],
    ["write", { path: "/elsewhere/b.ts", content: "x" }, "/elsewhere/b.ts"],
    ["edit", { path: "a.ts", old_string: "a", new_string: "b", replace_all: true }, "a.ts (all)"],
    ["list", {}, "."],
    ["list", { path: WS }, "."],
    ["glob", { pattern: "**/*.ts", path: "src" }, "**/*.ts in src"],
    ["grep", { pattern: "TODO", glob: "*.ts" }, "TODO (*.ts)"],
    [
      "bash",
      { command: "npm test\n  && npm run lint", timeout_ms: 5 },
      "npm test↵  && npm run lint",
    ],
    ["request_permissions", { reason: "why", hosts: ["a.com", "b.org"] }, "hosts: a.com, b.org"],
    ["request_permissions", { reason: "needs the cache" }, "needs the cache"],
    ["mcp__x__y", { q: "hi", n: 2 }, '{"q":"hi","n":2}'],
    ["bash", '{"command": "ls"', '{"command": "ls"'],
  ];
  for (const [name, args, expected] of cases) equal(summarizeArgs(name, args, WS), expected);
  ok(summarizeArgs("other", { text: "x".repeat(1_000) }, WS).length <= 300);
});

Deno.test("finishedToolLines() shows a write's size and a bounded diff", () => {
  const content = Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n") + "\n";
  const args = { path: "new.ts", content };
  const bare = finishedToolLines({ name: "write", args }, {
    observation: { status: "SUCCEEDED", output: 'Created "new.ts"' },
    durationMs: 5,
  }, options);
  deepEqual(bare, ["✓ write  new.ts  +40 lines  0.0s"]);
  const withDiff = finishedToolLines({ name: "write", args }, {
    observation: {
      status: "SUCCEEDED",
      output: 'Created "new.ts"',
      details: { kind: "diff", path: "new.ts", diff: unifiedDiff("new.ts", "", content) },
    },
    durationMs: 5,
  }, options);
  equal(withDiff[0], "✓ write  new.ts  +40 -0  0.0s");
  equal(withDiff.length, 1 + 12);
  ok(withDiff.some((line) => line.includes("more lines")));
});

Deno.test("finishedToolLines() reads tool details: lines, matches, exit codes", () => {
  const end = (name: string, args: unknown, details: ToolDetails) =>
    finishedToolLines({ name, args }, {
      observation: { status: "SUCCEEDED", output: "", details },
      durationMs: 1_250,
    }, options)[0];
  equal(
    end("read", { path: "a.ts" }, { kind: "file", path: "a.ts", lines: 120, truncated: false }),
    "✓ read  a.ts  120 lines  1.3s",
  );
  equal(
    end("grep", { pattern: "x" }, { kind: "matches", count: 7, truncated: true }),
    "✓ grep  x  7 matches+  1.3s",
  );
  equal(
    end("grep", { pattern: "x" }, { kind: "matches", count: 1, truncated: false }),
    "✓ grep  x  1 match  1.3s",
  );
  equal(
    end("read", { path: "a.ts" }, { kind: "file", path: "a.ts", lines: 1, truncated: false }),
    "✓ read  a.ts  1 line  1.3s",
  );
  equal(
    end("web_fetch", { url: "https://a.dev/x" }, {
      kind: "web",
      url: "https://a.dev/y",
      status: 200,
      bytes: 5120,
      ms: 1_250,
    }),
    '✓ web_fetch  {"url":"https://a.dev/x"}  https://a.dev/y · 200 · 5120 bytes  1.3s',
  );
  equal(
    end("bash", { command: "sleep 9" }, {
      kind: "command",
      exitCode: null,
      timedOut: false,
      truncated: false,
    }),
    "✗ bash  sleep 9  killed  1.3s",
  );
});

Deno.test("finishedToolLines() cuts the summary, not the status, on a narrow screen", () => {
  const [line] = finishedToolLines({ name: "bash", args: { command: "x".repeat(100) } }, {
    observation: { status: "SUCCEEDED", output: "" },
    durationMs: 2_000,
  }, { ...options, width: 30 });
  equal(visibleWidth(line), 30);
  ok(line.startsWith("✓ bash  xxx") && line.endsWith("  2.0s"), line);
});

Deno.test("decisionText() names who decided and why", () => {
  const text = (by: "person" | "reviewer" | "bypass" | "policy", allow: boolean, reason: string) =>
    decisionText({ by, allow, reason }, plain);
  equal(text("person", true, "The user allowed it"), "allowed by person (once)");
  equal(
    text("person", true, "The user allowed it for this session"),
    "allowed by person (for this session)",
  );
  equal(text("person", false, "The user denied it"), "denied by person");
  equal(text("reviewer", false, "Reviewer: deletes files"), "denied by reviewer: deletes files");
  equal(text("bypass", true, "Review is bypassed"), "allowed (review bypassed)");
  ok(
    decisionText({ by: "policy", allow: false, reason: "no" }, themeFor(true)).includes("\x1b[31m"),
  );
});

Deno.test("a call's line shows the tool's name as the model wrote it, escapes visible", () => {
  const name = "re\x1b[0mad\u202e";
  const running = runningToolLines(
    { name, args: { path: "a.ts" }, startedAt: 0, output: "", waiting: false },
    { ...options, now: 0 },
  );
  ok(running[0].includes("re␛[0mad"), running[0]);
  const finished = finishedToolLines({ name, args: { path: "a.ts" } }, {
    observation: { status: "ERROR", code: "UNKNOWN_TOOL", message: "Unknown tool" },
    durationMs: 1,
  }, options);
  ok(finished[0].startsWith("✗ re␛[0mad"), finished[0]);
  ok(!finished[0].includes("\u202e") && !finished[0].includes("\x1b"), finished[0]);
});
