import { deepEqual, equal, ok, rejects, throws } from "node:assert/strict";
import {
  type ExecutorOptions,
  MAX_RECORDED_CALLS,
  type NodeAttempt,
  type NodeInput,
  type NodeOutcome,
  PlanExecutor,
} from "../../src/plan/executor.ts";
import { PlanValidationError } from "../../src/plan/errors.ts";
import type { NodeRun, NodeState, PlanNode, PlanState } from "../../src/plan/types.ts";

function node(id: string, ...dependsOn: string[]): PlanNode {
  return { id, title: `Title ${id}`, task: `Do ${id}`, dependsOn };
}

function planState(nodes: PlanNode[], runs: Record<string, NodeRun> = {}): PlanState {
  const all = Object.fromEntries(
    nodes.map((each) => [each.id, runs[each.id] ?? { state: "WAITING" }]),
  );
  return { id: "p1", task: "the task", nodes, runs: all as Record<string, NodeRun> };
}

/** One call of `runNode`, finished by the test. */
interface Call {
  node: PlanNode;
  inputs: NodeInput[];
  signal: AbortSignal;
  attempt: NodeAttempt;
  finish(outcome: NodeOutcome): void;
  fail(error: unknown): void;
}

/** A `runNode` whose calls wait until the test finishes them; `started(id)` awaits a call. */
class Workers {
  calls: Call[] = [];
  #waiting = new Map<string, PromiseWithResolvers<Call>>();

  runNode = (
    node: PlanNode,
    inputs: NodeInput[],
    signal: AbortSignal,
    attempt: NodeAttempt,
  ): Promise<NodeOutcome> => {
    const done = Promise.withResolvers<NodeOutcome>();
    const call = { node, inputs, signal, attempt, finish: done.resolve, fail: done.reject };
    this.calls.push(call);
    this.#latch(node.id).resolve(call);
    return done.promise;
  };

  started(id: string): Promise<Call> {
    return this.#latch(id).promise;
  }

  ids(): string[] {
    return this.calls.map((call) => call.node.id);
  }

  #latch(id: string): PromiseWithResolvers<Call> {
    let latch = this.#waiting.get(id);
    if (!latch) this.#waiting.set(id, latch = Promise.withResolvers<Call>());
    return latch;
  }
}

/** Records every update; `running` is the most nodes seen RUNNING at once. */
function recorder() {
  const updates: Array<{ id: string; state: NodeState }> = [];
  let running = 0;
  const seenTogether = new Set<string>();
  const onUpdate = (id: string, run: NodeRun, state: PlanState) => {
    updates.push({ id, state: run.state });
    const now = Object.entries(state.runs).filter(([, each]) => each.state === "RUNNING");
    running = Math.max(running, now.length);
    seenTogether.add(now.map(([each]) => each).sort().join("+"));
  };
  return { updates, onUpdate, seenTogether, maxRunning: () => running };
}

function statesOf(state: PlanState): Record<string, NodeState> {
  return Object.fromEntries(Object.entries(state.runs).map(([id, run]) => [id, run.state]));
}

function clock(): () => Date {
  let ms = Date.UTC(2025, 0, 1);
  return () => new Date(ms += 1000);
}

function executor(nodes: PlanNode[], workers: Workers, options: Partial<ExecutorOptions> = {}) {
  return new PlanExecutor({ state: planState(nodes), runNode: workers.runNode, ...options });
}

Deno.test("PlanExecutor runs two independent nodes at once, never more than concurrency", async () => {
  const workers = new Workers();
  const record = recorder();
  const plan = executor([node("a"), node("b"), node("c")], workers, {
    onUpdate: record.onUpdate,
    now: clock(),
  });
  const done = plan.run();
  const [a, b] = await Promise.all([workers.started("a"), workers.started("b")]);
  ok(record.seenTogether.has("a+b"));
  deepEqual(workers.ids(), ["a", "b"]);
  b.finish({ ok: true, text: "B" });
  (await workers.started("c")).finish({ ok: true, text: "C" });
  a.finish({ ok: true, text: "A" });
  const result = await done;
  equal(record.maxRunning(), 2);
  deepEqual(statesOf(result.state), { a: "SUCCEEDED", b: "SUCCEEDED", c: "SUCCEEDED" });
  const { startedAt, endedAt, durationMs, result: text } = result.state.runs.a;
  deepEqual([startedAt, text], ["2025-01-01T00:00:01.000Z", "A"]);
  equal(durationMs, Date.parse(endedAt!) - Date.parse(startedAt!));
  ok(durationMs! >= 4000);
  equal(result.cancelled, false);
});

Deno.test("PlanExecutor with concurrency 1 runs nodes one at a time in topological order", async () => {
  const workers = new Workers();
  const record = recorder();
  const nodes = [node("d", "c"), node("c", "a"), node("b"), node("a")];
  const plan = executor(nodes, workers, { concurrency: 1, onUpdate: record.onUpdate });
  const done = plan.run();
  for (const id of ["b", "a", "c", "d"]) (await workers.started(id)).finish({ ok: true, text: id });
  await done;
  deepEqual(workers.ids(), ["b", "a", "c", "d"]);
  equal(record.maxRunning(), 1);
});

Deno.test("PlanExecutor blocks dependents of a failed node transitively, independent d succeeds", async () => {
  const workers = new Workers();
  const record = recorder();
  const plan = executor([node("a"), node("b", "a"), node("c", "b"), node("d")], workers, {
    onUpdate: record.onUpdate,
  });
  const done = plan.run();
  (await workers.started("a")).finish({ ok: false, text: "tests fail" });
  (await workers.started("d")).finish({ ok: true, text: "D" });
  const { state } = await done;
  deepEqual(statesOf(state), { a: "FAILED", b: "BLOCKED", c: "BLOCKED", d: "SUCCEEDED" });
  equal(state.runs.a.error, "tests fail");
  deepEqual(state.runs.b, { state: "BLOCKED", blockedBy: ["a"], error: 'blocked by "a" (FAILED)' });
  deepEqual(state.runs.c, {
    state: "BLOCKED",
    blockedBy: ["b"],
    error: 'blocked by "b" (BLOCKED)',
  });
  deepEqual(workers.ids(), ["a", "d"]);
  const blockedAt = record.updates.findIndex((each) => each.id === "c");
  const failedAt = record.updates.findIndex((each) => each.state === "FAILED");
  ok(blockedAt > failedAt);
});

Deno.test("PlanExecutor passes dependencies' results in dependsOn order", async () => {
  const workers = new Workers();
  const plan = executor([node("a"), node("b"), node("c", "b", "a")], workers);
  const done = plan.run();
  (await workers.started("a")).finish({ ok: true, text: "result A" });
  (await workers.started("b")).finish({ ok: true, text: "result B" });
  const c = await workers.started("c");
  deepEqual(c.inputs, [
    { id: "b", title: "Title b", result: "result B" },
    { id: "a", title: "Title a", result: "result A" },
  ]);
  deepEqual(c.node, node("c", "b", "a"));
  c.finish({ ok: true, text: "C" });
  await done;
});

Deno.test("PlanExecutor turns a throwing runNode into a FAILED node with its message", async () => {
  const plan = new PlanExecutor({
    state: planState([node("a"), node("b"), node("c", "a")]),
    runNode: (each) => {
      if (each.id === "a") throw new Error('Cannot start worker "a": no model');
      return Promise.reject(new Error("worker crashed"));
    },
  });
  const { state } = await plan.run();
  deepEqual(statesOf(state), { a: "FAILED", b: "FAILED", c: "BLOCKED" });
  equal(state.runs.a.error, 'Cannot start worker "a": no model');
  equal(state.runs.b.error, "worker crashed");
});

Deno.test("PlanExecutor resumes without rerunning SUCCEEDED nodes, resetting the rest", async () => {
  const workers = new Workers();
  const record = recorder();
  const succeeded: NodeRun = {
    state: "SUCCEEDED",
    result: "kept A",
    startedAt: "2025-01-01T00:00:00.000Z",
    endedAt: "2025-01-01T00:00:02.000Z",
    durationMs: 2000,
  };
  const nodes = [node("a"), node("b", "a"), node("c", "b"), node("d")];
  const plan = new PlanExecutor({
    state: planState(nodes, {
      a: succeeded,
      b: { state: "FAILED", error: "boom", startedAt: "2025-01-01T00:00:03.000Z" },
      c: { state: "BLOCKED", blockedBy: ["b"], error: 'blocked by "b" (FAILED)' },
      d: { state: "RUNNING", startedAt: "2025-01-01T00:00:03.000Z" },
    }),
    runNode: workers.runNode,
    onUpdate: record.onUpdate,
  });
  const done = plan.run();
  deepEqual(record.updates.slice(0, 3), [
    { id: "b", state: "WAITING" },
    { id: "c", state: "WAITING" },
    { id: "d", state: "WAITING" },
  ]);
  const b = await workers.started("b");
  deepEqual(b.inputs, [{ id: "a", title: "Title a", result: "kept A" }]);
  b.finish({ ok: true, text: "B" });
  (await workers.started("d")).finish({ ok: true, text: "D" });
  (await workers.started("c")).finish({ ok: true, text: "C" });
  const { state } = await done;
  ok(!workers.ids().includes("a"));
  deepEqual(state.runs.a, succeeded);
  deepEqual(statesOf(state), { a: "SUCCEEDED", b: "SUCCEEDED", c: "SUCCEEDED", d: "SUCCEEDED" });
});

Deno.test("PlanExecutor keeps the calls an interrupted attempt started and tells the next one", async () => {
  const workers = new Workers();
  const runs: NodeRun[] = [];
  const controller = new AbortController();
  const first = new PlanExecutor({
    state: planState([node("a"), node("b"), node("c")], {
      // tern was killed while a ran; b was cancelled; c failed on its own.
      a: {
        state: "RUNNING",
        startedAt: "2025-01-01T00:00:00.000Z",
        calls: ["bash: echo a >> a.log"],
      },
      b: { state: "WAITING", error: "cancelled", calls: ["write: b.txt"], moreCalls: true },
      c: { state: "FAILED", error: "boom", calls: ["bash: rm c"] },
    }),
    concurrency: 1,
    runNode: workers.runNode,
    onUpdate: (id, run) => id === "a" && runs.push(run),
    signal: controller.signal,
    now: clock(),
  });
  const done = first.run();
  deepEqual(first.state.runs.b, { state: "WAITING", calls: ["write: b.txt"], moreCalls: true });
  deepEqual(first.state.runs.c, { state: "WAITING" });
  const a = await workers.started("a");
  deepEqual([a.attempt.interrupted, a.attempt.moreInterrupted], [["bash: echo a >> a.log"], false]);
  // Each call is reported (and so recorded) as it starts.
  a.attempt.callStarted("bash: sleep 30");
  deepEqual(runs.at(-1)?.calls, ["bash: echo a >> a.log", "bash: sleep 30"]);
  controller.abort();
  a.fail(new DOMException("aborted", "AbortError"));
  const cancelled = (await done).state;
  deepEqual(cancelled.runs.a, {
    state: "WAITING",
    error: "cancelled",
    calls: ["bash: echo a >> a.log", "bash: sleep 30"],
  });
  a.attempt.callStarted("bash: late");
  deepEqual(first.state.runs.a.calls?.length, 2, "an ended attempt adds nothing");

  // The next run's attempts get every earlier call; what is kept is bounded.
  const next = new Workers();
  const second = new PlanExecutor({ state: cancelled, concurrency: 1, runNode: next.runNode });
  const finished = second.run();
  const again = await next.started("a");
  deepEqual(again.attempt.interrupted, ["bash: echo a >> a.log", "bash: sleep 30"]);
  for (let i = 0; i < MAX_RECORDED_CALLS; i++) {
    again.attempt.callStarted(`bash: ${"x".repeat(300)}`);
  }
  const kept = second.state.runs.a;
  equal(kept.calls?.length, MAX_RECORDED_CALLS);
  equal(kept.moreCalls, true);
  equal(kept.calls?.at(-1), `bash: ${"x".repeat(194)}…`);
  again.finish({ ok: true, text: "A" });
  const b = await next.started("b");
  deepEqual([b.attempt.interrupted, b.attempt.moreInterrupted], [["write: b.txt"], true]);
  b.finish({ ok: true, text: "B" });
  const c = await next.started("c");
  deepEqual(c.attempt.interrupted, []);
  c.finish({ ok: true, text: "C" });
  // A node that ended keeps no calls.
  deepEqual(Object.keys((await finished).state.runs.a).sort(), [
    "durationMs",
    "endedAt",
    "result",
    "startedAt",
    "state",
  ]);
});

Deno.test("PlanExecutor.append() accepts nodes before and during a run and runs them", async () => {
  const workers = new Workers();
  const appended: string[][] = [];
  const plan = executor([node("a")], workers, {
    onAppend: (added, state) => {
      appended.push(added.map((each) => each.id));
      ok(state.runs[added[0].id]);
    },
  });
  deepEqual(plan.append([node("b", "a")]), { ok: true });
  const done = plan.run();
  const a = await workers.started("a");
  deepEqual(plan.append([node("c", "b", "a")]), { ok: true });
  equal(plan.state.runs.c.state, "WAITING");
  a.finish({ ok: true, text: "A" });
  (await workers.started("b")).finish({ ok: true, text: "B" });
  (await workers.started("c")).finish({ ok: true, text: "C" });
  const { state } = await done;
  deepEqual(appended, [["b"], ["c"]]);
  deepEqual(state.nodes.map((each) => each.id), ["a", "b", "c"]);
  deepEqual(statesOf(state), { a: "SUCCEEDED", b: "SUCCEEDED", c: "SUCCEEDED" });
});

Deno.test("PlanExecutor.append() rejects a graph that does not validate and changes nothing", async () => {
  const workers = new Workers();
  let appends = 0;
  const plan = executor([node("a"), node("b", "a")], workers, { onAppend: () => appends++ });
  const done = plan.run();
  const a = await workers.started("a");
  const before = plan.state;
  deepEqual(plan.append([node("c", "d"), node("d", "c")]), {
    ok: false,
    problems: ["cycle: c → d → c"],
  });
  deepEqual(plan.append([node("b")]), { ok: false, problems: ['duplicate id "b"'] });
  deepEqual(plan.append([node("e", "x")]), { ok: false, problems: ['"e" depends on unknown "x"'] });
  deepEqual(plan.state, before);
  equal(appends, 0);
  a.finish({ ok: true, text: "A" });
  (await workers.started("b")).finish({ ok: true, text: "B" });
  deepEqual(Object.keys((await done).state.runs), ["a", "b"]);
});

Deno.test("PlanExecutor on abort cancels running nodes back to WAITING and starts nothing new", async () => {
  const workers = new Workers();
  const controller = new AbortController();
  const plan = executor([node("a"), node("b"), node("c")], workers, { signal: controller.signal });
  const done = plan.run();
  const [a, b] = await Promise.all([workers.started("a"), workers.started("b")]);
  controller.abort();
  ok(a.signal.aborted && b.signal.aborted);
  a.finish({ ok: false, text: "aborted" });
  b.fail(new DOMException("aborted", "AbortError"));
  const result = await done;
  equal(result.cancelled, true);
  deepEqual(result.state.runs.a, { state: "WAITING", error: "cancelled" });
  deepEqual(result.state.runs.b, { state: "WAITING", error: "cancelled" });
  deepEqual(result.state.runs.c, { state: "WAITING" });
  deepEqual(workers.ids(), ["a", "b"]);
});

Deno.test("PlanExecutor.run() with an aborted signal starts nothing", async () => {
  const workers = new Workers();
  const plan = executor([node("a")], workers, { signal: AbortSignal.abort() });
  const result = await plan.run();
  equal(result.cancelled, true);
  deepEqual(workers.ids(), []);
});

Deno.test("PlanExecutor replans once after a failure and runs the appended nodes", async () => {
  const workers = new Workers();
  const replans: Array<{ id: string; error: string; states: Record<string, NodeState> }> = [];
  const plan = executor([node("root"), node("a", "root"), node("b", "a")], workers, {
    replan: (failed, state) => {
      replans.push({ id: failed.node.id, error: failed.error, states: statesOf(state) });
      return Promise.resolve([node("a2", "root"), node("b2", "a2")]);
    },
  });
  const done = plan.run();
  (await workers.started("root")).finish({ ok: true, text: "R" });
  (await workers.started("a")).finish({ ok: false, text: "a broke" });
  const a2 = await workers.started("a2");
  deepEqual(a2.inputs, [{ id: "root", title: "Title root", result: "R" }]);
  a2.finish({ ok: true, text: "A2" });
  (await workers.started("b2")).finish({ ok: false, text: "b2 broke too" });
  const result = await done;
  deepEqual(replans, [{
    id: "a",
    error: "a broke",
    states: { root: "SUCCEEDED", a: "FAILED", b: "BLOCKED" },
  }]);
  equal(result.replans, 1);
  deepEqual(statesOf(result.state), {
    root: "SUCCEEDED",
    a: "FAILED",
    b: "BLOCKED",
    a2: "SUCCEEDED",
    b2: "FAILED",
  });
});

Deno.test("PlanExecutor rejects a replan that does not validate or throws, changing nothing", async () => {
  const workers = new Workers();
  const rejected: string[][] = [];
  const answers = [
    () => Promise.resolve([node("x", "nowhere")]),
    () => Promise.reject(new Error("model unreachable")),
  ];
  const plan = executor([node("a"), node("b")], workers, {
    maxReplans: 2,
    replan: () => answers.shift()!(),
    onReplanRejected: (problems) => rejected.push(problems),
  });
  const done = plan.run();
  (await workers.started("a")).finish({ ok: false, text: "A failed" });
  (await workers.started("b")).finish({ ok: false, text: "B failed" });
  const result = await done;
  deepEqual(rejected, [['"x" depends on unknown "nowhere"'], ["replan failed: model unreachable"]]);
  equal(result.replans, 2);
  deepEqual(result.state.nodes, [node("a"), node("b")]);
  deepEqual(statesOf(result.state), { a: "FAILED", b: "FAILED" });
});

Deno.test("PlanExecutor rejects run() with an exception thrown by onUpdate", async () => {
  const workers = new Workers();
  const plan = executor([node("a"), node("b", "a")], workers, {
    onUpdate: (id, run) => {
      if (id === "a" && run.state === "SUCCEEDED") throw new Error("disk full");
    },
  });
  const done = plan.run();
  (await workers.started("a")).finish({ ok: true, text: "A" });
  await rejects(done, /disk full/);
  equal(plan.state.runs.b.state, "WAITING");
  deepEqual(workers.ids(), ["a"]);
});

Deno.test("PlanExecutor refuses an invalid graph and bad limits", () => {
  const runNode = () => Promise.resolve({ ok: true, text: "" });
  throws(
    () => new PlanExecutor({ state: planState([node("a", "a")]), runNode }),
    PlanValidationError,
  );
  throws(() => new PlanExecutor({ state: planState([node("a")]), runNode, concurrency: 0 }), {
    name: "RangeError",
  });
  throws(() => new PlanExecutor({ state: planState([node("a")]), runNode, maxReplans: -1 }), {
    name: "RangeError",
  });
});
