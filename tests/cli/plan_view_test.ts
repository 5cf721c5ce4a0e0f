import { deepEqual } from "node:assert/strict";
import { themeFor } from "../../src/tui/theme.ts";
import { planLines, planSummary } from "../../src/cli/plan_view.ts";
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
