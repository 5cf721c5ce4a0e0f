/**
 * A plan's records in its session (src/plan/record.ts): the plan a resume continues is the newest
 * one on the path with its changes applied, and a resumed session finds it without reading what
 * lies before its last compaction.
 */
import { deepEqual, equal, notDeepEqual } from "node:assert/strict";
import { latestPlan, newPlanState, recordPlan, replayPlan } from "../../src/plan/record.ts";
import type { PlanNode } from "../../src/plan/types.ts";
import { loadSession } from "../../src/session/load.ts";
import { Session } from "../../src/session/session.ts";
import { SessionTree } from "../../src/session/tree.ts";
import { seededRandom } from "../support/seeded.ts";

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

Deno.test("a compaction carries each node's newest record, however often the nodes changed", () =>
  withHome(async (home) => {
    const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
    recordPlan(session, { kind: "plan", plan: newPlanState("p1", "the task", NODES) });
    for (let n = 0; n < 200; n++) {
      const nodeId = n % 2 === 0 ? "a" : "b";
      recordPlan(session, { kind: "node", planId: "p1", nodeId, run: { state: "RUNNING" } });
    }
    recordPlan(session, { kind: "node", planId: "p1", nodeId: "a", run: { state: "SUCCEEDED" } });
    const last = session.append({ type: "message", message: { role: "user", content: "m" } });
    session.append(compaction(last.id));
    session.close();
    const line = (await Deno.readTextFile(session.path)).split("\n")
      .find((text) => text.includes('"compaction"'))!;
    deepEqual(JSON.parse(line).checkpoint.plan.map((data: { kind: string }) => data.kind), [
      "plan",
      "node",
      "node",
    ]);
    const reopened = await Session.open(session.path);
    deepEqual(latestPlan(reopened)?.runs, { a: { state: "SUCCEEDED" }, b: { state: "RUNNING" } });
    reopened.close();
  }));

Deno.test("latestPlan() after random plans, node changes, appends, compactions and resumes is the whole path's plan", () =>
  withHome(async (home) => {
    for (let seed = 1; seed <= 30; seed++) {
      const next = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
      let session = Session.create(home, { cwd: "/w", ternVersion: "t" });
      let last: string | null = null;
      for (let n = 0; n < 150; n++) {
        const roll = next();
        const planId = pick(["p0", "p1"]);
        if (roll < 0.1) {
          recordPlan(session, { kind: "plan", plan: newPlanState(planId, `task ${n}`, NODES) });
        } else if (roll < 0.7) {
          const run = { state: pick(["RUNNING", "SUCCEEDED", "FAILED"] as const), result: `${n}` };
          recordPlan(session, { kind: "node", planId, nodeId: pick(["a", "b", "c", "d"]), run });
        } else if (roll < 0.78) {
          const id = pick(["c", "d"]);
          recordPlan(session, {
            kind: "append",
            planId,
            nodes: [{ id, title: id, task: id, dependsOn: [] }],
          });
        } else if (roll < 0.9) {
          last = session.append({ type: "message", message: { role: "user", content: `m${n}` } })
            .id;
        } else {
          session.append(compaction(last));
        }
        if (next() < 0.05) {
          session.close();
          session = await Session.open(session.path);
        }
      }
      session.close();
      const reopened = await Session.open(session.path);
      const whole = new SessionTree((await loadSession(session.path)).entries).path();
      deepEqual(latestPlan(reopened), replayPlan(whole), `seed ${seed}`);
      reopened.close();
    }
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
