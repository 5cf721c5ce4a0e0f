/**
 * A plan's records in its session (src/plan/record.ts): the plan a resume continues is the newest
 * one on the path with its changes applied, and a resumed session finds it without reading what
 * lies before its last compaction.
 */
import { deepEqual, equal, notDeepEqual } from "node:assert/strict";
import { latestPlan, newPlanState, recordPlan, replayPlan } from "../../src/plan/record.ts";
import type { PlanNode } from "../../src/plan/types.ts";
import { Session } from "../../src/session/session.ts";

const NODES: PlanNode[] = [
  { id: "a", title: "A", task: "Do a", dependsOn: [] },
  { id: "b", title: "B", task: "Do b", dependsOn: ["a"] },
];

/** A compaction as the context code writes it (Session adds the checkpoint). */
function compaction(firstKeptId: string | null) {
  return {
    type: "compaction" as const,
    summary: "summary",
    firstKeptId,
    tokensBefore: 100,
    tokensAfter: 10,
    summarised: [],
    fallback: false,
  };
}

/**
 * A session whose plan starts, runs `a`, then `before` messages and a compaction, then runs `b`
 * and appends a node `c`. An older plan comes first, so only the newest may count.
 */
function planSession(home: string, before: number): string {
  const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
  recordPlan(session, { kind: "plan", plan: newPlanState("old", "older task", NODES) });
  recordPlan(session, { kind: "plan", plan: newPlanState("p1", "the task", NODES) });
  recordPlan(session, { kind: "node", planId: "p1", nodeId: "a", run: { state: "SUCCEEDED" } });
  recordPlan(session, { kind: "node", planId: "old", nodeId: "b", run: { state: "FAILED" } });
  let last = "";
  for (let n = 0; n < before; n++) {
    last = session.append({ type: "message", message: { role: "user", content: `m${n}` } }).id;
  }
  session.append(compaction(last));
  recordPlan(session, { kind: "node", planId: "p1", nodeId: "b", run: { state: "RUNNING" } });
  recordPlan(session, {
    kind: "append",
    planId: "p1",
    nodes: [{ id: "c", title: "C", task: "Do c", dependsOn: ["b"] }],
  });
  session.close();
  return session.path;
}

/** Overwrites line `n` of the file (0 is the header) with as many "#" bytes. */
async function garbleLine(path: string, n: number): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n");
  lines[n] = "#".repeat(lines[n].length);
  await Deno.writeTextFile(path, lines.join("\n"));
}

/** Runs `fn` with a fresh tern home, removed afterwards. */
async function withHome(fn: (home: string) => Promise<void> | void): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "tern-plan-record-" });
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

const EXPECTED = {
  id: "p1",
  task: "the task",
  nodes: [...NODES, { id: "c", title: "C", task: "Do c", dependsOn: ["b"] }],
  runs: { a: { state: "SUCCEEDED" }, b: { state: "RUNNING" }, c: { state: "WAITING" } },
};

Deno.test("latestPlan() of a resumed session rebuilds its plan without reading before the compaction", () =>
  withHome(async (home) => {
    const path = planSession(home, 500);
    const session = await Session.open(path);
    // The plan's first line becomes garbage once the session is open: had latestPlan() read the
    // lines before the compaction, it would have found the older plan.
    await garbleLine(path, 2);
    deepEqual(latestPlan(session), EXPECTED);
    session.close();
    const garbled = await Session.open(path);
    notDeepEqual(replayPlan(garbled.entriesTo()), EXPECTED, "the garbled line hides the plan");
    garbled.close();
  }));

Deno.test("latestPlan() reads the whole path when a compaction carries no plan (older files)", () =>
  withHome(async (home) => {
    const path = planSession(home, 50);
    // As a tern before checkpoints carried plans wrote it.
    const lines = (await Deno.readTextFile(path)).split("\n").map((line) => {
      if (!line.includes('"compaction"')) return line;
      const entry = JSON.parse(line);
      delete entry.checkpoint.plan;
      return JSON.stringify(entry);
    });
    await Deno.writeTextFile(path, lines.join("\n"));
    const session = await Session.open(path);
    deepEqual(latestPlan(session), EXPECTED);
    session.close();
  }));

Deno.test("latestPlan() is undefined for a session that never planned", () =>
  withHome((home) => {
    const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "message", message: { role: "user", content: "hi" } });
    session.append({ type: "plan", data: { kind: "node", planId: "x", nodeId: "a" } });
    equal(latestPlan(session), undefined);
    session.close();
  }));
