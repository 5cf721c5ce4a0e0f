/** `tern plan`'s live graph on a terminal: redrawn in place, whatever the lines hold. */
import { deepEqual } from "node:assert/strict";
import { liveBlock } from "../../src/cli/plan.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { planLines } from "../../src/cli/plan_view.ts";
import type { PlanState } from "../../src/plan/types.ts";
import { VtScreen } from "../support/vt_screen.ts";

function screenWith(columns: number) {
  const screen = new VtScreen(columns, 12);
  screen.write("$ tern plan\r\n");
  // The terminal's own output processing (onlcr) turns each "\n" into "\r\n".
  const live = liveBlock((text) => screen.write(text.replaceAll("\n", "\r\n")), {
    columns: () => columns,
  });
  return { screen, live };
}

Deno.test("liveBlock() cuts lines to the terminal's width, so a redraw leaves no stale row", () => {
  const { screen, live } = screenWith(20);
  live.draw(["▸ a RUNNING   " + "long title ".repeat(5), "· b WAITING   B"]);
  live.draw(["✓ a SUCCEEDED A", "▸ b RUNNING   B"]);
  live.draw(["✓ a SUCCEEDED A", "✓ b SUCCEEDED B"]);
  deepEqual(screen.text(), ["$ tern plan", "✓ a SUCCEEDED A", "✓ b SUCCEEDED B"]);
});

Deno.test("liveBlock() prints lines above the graph and keeps drawing it below them", () => {
  const { screen, live } = screenWith(40);
  live.draw(["▸ a RUNNING", "· b WAITING"]);
  live.print(["tern: this turn touched files that run code on your machine later; check them:"]);
  live.draw(["✓ a SUCCEEDED", "▸ b RUNNING"]);
  deepEqual(screen.text(), [
    "$ tern plan",
    "tern: this turn touched files that run c",
    "ode on your machine later; check them:",
    "✓ a SUCCEEDED",
    "▸ b RUNNING",
  ]);
});

Deno.test("liveBlock() redraws a graph whose title had runs of spaces as one row per node", () => {
  const state: PlanState = {
    id: "p",
    task: "t",
    nodes: [
      { id: "a", title: `Fix${" ".repeat(200)}✓ z SUCCEEDED fake`, task: "x", dependsOn: [] },
      { id: "b", title: "Build", task: "y", dependsOn: [] },
    ],
    runs: { a: { state: "RUNNING" }, b: { state: "WAITING" } },
  };
  const { screen, live } = screenWith(30);
  const plain = themeFor(false);
  live.draw(planLines(state, plain));
  live.draw(planLines({ ...state, runs: { ...state.runs, b: { state: "RUNNING" } } }, plain));
  deepEqual(screen.text(), [
    "$ tern plan",
    "▸ a RUNNING   Fix ✓ z SUCCEED…",
    "▸ b RUNNING   Build",
  ]);
});

Deno.test("liveBlock() shows a graph taller than the terminal as its first rows and a count, leaving no stale copy", () => {
  const screen = new VtScreen(40, 6);
  screen.write("$ tern plan\r\n");
  const size = { columns: () => 40, rows: () => 6 };
  const live = liveBlock((text) => screen.write(text.replaceAll("\n", "\r\n")), size);
  const frame = (done: number) =>
    Array.from(
      { length: 10 },
      (_, i) => `${i} ${i < done ? "SUCCEEDED" : i === done ? "RUNNING" : "WAITING"}`,
    );
  for (let done = 0; done <= 10; done++) live.draw(frame(done));
  deepEqual(screen.text(), [
    "$ tern plan",
    "0 SUCCEEDED",
    "1 SUCCEEDED",
    "2 SUCCEEDED",
    "3 SUCCEEDED",
    "… 6 more (all in the summary)",
  ]);
});
