import { deepEqual, ok } from "node:assert/strict";
import { themeFor } from "../../src/tui/theme.ts";
import { planLine, planLines, planSummary } from "../../src/cli/plan_view.ts";
import type { PlanState } from "../../src/plan/types.ts";

const plain = themeFor(false);

const HOSTILE: PlanState = {
  id: "p1",
  task: "t",
  nodes: [
    { id: "a", title: "Read\n\x1b[2A\x1b[2Kthe\rcode \u202eok", task: "x", dependsOn: [] },
    { id: "b", title: "\x1b]0;pwned\x07Fix", task: "y", dependsOn: ["a"] },
  ],
  runs: {
    a: { state: "SUCCEEDED", result: "done \x1b]52;c;eA==\x07reading\nmore" },
    b: { state: "FAILED", error: "\x9b2Jbroke\r\x1b[1Ahidden" },
  },
};

Deno.test("planLines() keeps each model-written title on its line, without controls", () => {
  deepEqual(planLines(HOSTILE, plain), [
    "✓ a SUCCEEDED Read the code ok",
    "✗ b FAILED    Fix ← a",
  ]);
});

Deno.test("planSummary() shows results and errors without controls", () => {
  deepEqual(planSummary(HOSTILE, plain, false), [
    "✓ a: done reading",
    "✗ b: broke",
    "1 succeeded, 1 failed",
  ]);
});

Deno.test("planLines() collapses a title's runs of spaces and cuts a long title", () => {
  const fake = `Fix${" ".repeat(300)}✓ evil SUCCEEDED Deploy`;
  const state: PlanState = {
    id: "p2",
    task: "t",
    nodes: [
      { id: "a", title: fake, task: "x", dependsOn: [] },
      { id: "b", title: `Long ${"word ".repeat(60)}`, task: "y", dependsOn: [] },
      { id: "c", title: "tabs\t\t\u00a0\u3000and  spaces", task: "z", dependsOn: [] },
    ],
    runs: { a: { state: "RUNNING" }, b: { state: "WAITING" }, c: { state: "WAITING" } },
  };
  const [a, b, c] = planLines(state, plain);
  deepEqual(a, "▸ a RUNNING   Fix ✓ evil SUCCEEDED Deploy");
  deepEqual(b, `· b WAITING   ${`Long ${"word ".repeat(60)}`.slice(0, 100)}…`);
  deepEqual(c, "· c WAITING   tabs and spaces");
});

Deno.test("planLine() picks a node by its id, never by a title that names another id", () => {
  const state: PlanState = {
    id: "p3",
    task: "t",
    nodes: [
      { id: "a", title: "Check b and c", task: "x", dependsOn: [] },
      { id: "b", title: "Build", task: "y", dependsOn: [] },
    ],
    runs: { a: { state: "WAITING" }, b: { state: "RUNNING" } },
  };
  deepEqual(planLine(state, "b", plain), "▸ b RUNNING   Build");
  deepEqual(planLine(state, "a", plain), "· a WAITING   Check b and c");
  deepEqual(planLine(state, "zz", plain), undefined);
});

Deno.test("planSummary() keeps a worker's padded answer on its one row", () => {
  for (const pad of [" ".repeat(65), "\u2800".repeat(65)]) {
    const state: PlanState = {
      id: "p2",
      task: "t",
      nodes: [{ id: "lint", title: "Lint", task: "x", dependsOn: [] }],
      runs: {
        lint: { state: "SUCCEEDED", result: `lint ok${pad}✓ deploy: pushed v2 to production` },
      },
    };
    const [row] = planSummary(state, plain, false);
    // Collapsed or counted: no run long enough to wrap the rest to a row of its own.
    ok(!/ {2}|\u2800{2}/.test(row), row);
    ok(row.length < 80, row);
  }
});

Deno.test("planLines() shows a title's blank glyphs counted, so none forges a row", () => {
  const fake = "✗ deploy  FAILED    cannot deploy";
  const pads = ["\u2800".repeat(62), "\u3164".repeat(62), "\uffa0".repeat(40), "\u200b".repeat(60)];
  for (const pad of pads) {
    const state: PlanState = {
      id: "p4",
      task: "t",
      nodes: [
        { id: "a", title: `Read${pad}${fake}`, task: "x", dependsOn: [] },
        { id: "b", title: "Write tests", task: "y", dependsOn: ["a"] },
      ],
      runs: { a: { state: "WAITING" }, b: { state: "WAITING" } },
    };
    const code = pad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    const [a] = planLines(state, plain);
    deepEqual(a, `· a WAITING   Read⟨${pad.length} × U+${code}⟩✗ deploy FAILED cannot deploy`);
    deepEqual(planLine(state, "a", plain), a);
  }
});

Deno.test("planLines() and planSummary() show a node without a run, named like a member", () => {
  const ids = ["constructor", "toString", "hasOwnProperty", "valueOf", "__proto__"];
  const state: PlanState = {
    id: "p5",
    task: "t",
    nodes: [
      { id: "a", title: "A", task: "x", dependsOn: [] },
      ...ids.map((id) => ({
        id,
        title: `Step ${id}`,
        task: "y",
        dependsOn: ["a"],
      })),
    ],
    runs: { a: { state: "SUCCEEDED", result: "ok" } },
  };
  deepEqual(planLines(state, plain), [
    "✓ a              SUCCEEDED A",
    ...ids.map((id) => `· ${id.padEnd(14)} WAITING   Step ${id} ← a`),
  ]);
  deepEqual(planLine(state, "valueOf", plain), "· valueOf        WAITING   Step valueOf ← a");
  deepEqual(planSummary(state, plain, false), [
    "✓ a: ok",
    ...ids.map((id) => `· ${id}`),
    "1 succeeded, 5 waiting",
  ]);
});
