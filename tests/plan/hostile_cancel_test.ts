/**
 * A cancel that comes as a step's worker finishes: the step it answered is done, so the plan
 * keeps it SUCCEEDED and a resume does not do it again (it may append, move or send something
 * twice); a worker that failed as the cancel came is run again.
 */
import { deepEqual, equal } from "node:assert/strict";
import { type NodeOutcome, PlanExecutor } from "../../src/plan/executor.ts";
import type { NodeRun, PlanNode } from "../../src/plan/types.ts";

const node = (id: string): PlanNode => ({ id, title: id, task: `Do ${id}`, dependsOn: [] });

Deno.test("PlanExecutor keeps a step whose worker answered as the plan was cancelled SUCCEEDED", async () => {
  const controller = new AbortController();
  const finish = new Map<string, (outcome: NodeOutcome) => void>();
  const started = Promise.withResolvers<void>();
  const recorded: Array<[string, NodeRun]> = [];
  const plan = new PlanExecutor({
    state: {
      id: "p",
      task: "t",
      nodes: [node("a"), node("b"), node("c")],
      runs: { a: { state: "WAITING" }, b: { state: "WAITING" }, c: { state: "WAITING" } },
    },
    concurrency: 2,
    signal: controller.signal,
    runNode: (each) => {
      const done = Promise.withResolvers<NodeOutcome>();
      finish.set(each.id, done.resolve);
      if (finish.size === 2) started.resolve();
      return done.promise;
    },
    onUpdate: (id, run) => recorded.push([id, run]),
  });
  const done = plan.run();
  await started.promise;
  controller.abort();
  finish.get("a")!({ ok: true, text: "appended the line" });
  finish.get("b")!({ ok: false, text: "CANCELLED: Cancelled during the model call" });
  const result = await done;
  equal(result.cancelled, true);
  equal(result.state.runs.a.state, "SUCCEEDED");
  equal(result.state.runs.a.result, "appended the line");
  deepEqual(result.state.runs.b, { state: "WAITING", error: "cancelled" });
  deepEqual(result.state.runs.c, { state: "WAITING" });
  // What the session records, and a resume replays.
  equal(recorded.findLast(([id]) => id === "a")![1].state, "SUCCEEDED");
});
