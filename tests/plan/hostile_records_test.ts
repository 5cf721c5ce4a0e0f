/**
 * A damaged session's plan records (a line of the right type with the wrong shape): replay skips
 * them as it skips a damaged line, so `tern plan -c` neither crashes nor takes a step for done
 * on a record that does not say so, and a plan id is shown as text.
 */
import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { DamagedPlanError, newPlanState, replayPlan } from "../../src/plan/record.ts";
import type { PlanNode } from "../../src/plan/types.ts";
import type { SessionEntry } from "../../src/session/types.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const node = (id: string, dependsOn: string[] = []): PlanNode => ({
  id,
  title: `Step ${id}`,
  task: `Do ${id}.`,
  dependsOn,
});

/** `plan` entries holding `records`, as a session path holds them. */
function entries(...records: unknown[]): SessionEntry[] {
  return records.map((data, n) => ({
    type: "plan",
    id: `e${n}`,
    parentId: n === 0 ? null : `e${n - 1}`,
    timestamp: "2026-01-01T00:00:00.000Z",
    data,
  } as SessionEntry));
}

const start = { kind: "plan", plan: newPlanState("p1", "the task", [node("a"), node("b", ["a"])]) };

/** The one session file under `home` (a workspace that ran once). */
function onlySessionFile(home: string): string {
  const folder = join(home, "sessions", [...Deno.readDirSync(join(home, "sessions"))][0].name);
  return join(folder, [...Deno.readDirSync(folder)].find((f) => f.name.endsWith(".jsonl"))!.name);
}

Deno.test("replayPlan() skips a node's change that lacks a run's shape: the node runs again", () => {
  for (
    const run of [
      { state: "SUCCEEDED", result: 5 },
      { state: "SUCCEEDED", calls: "rm -rf x" },
      { state: "SUCCEEDED\u001b[31m" },
      null,
      "SUCCEEDED",
    ]
  ) {
    const state = replayPlan(entries(start, { kind: "node", planId: "p1", nodeId: "a", run }))!;
    deepEqual({ ...state.runs }, { a: { state: "WAITING" }, b: { state: "WAITING" } });
  }
  const done = { state: "SUCCEEDED", result: "ok" };
  const state = replayPlan(entries(start, { kind: "node", planId: "p1", nodeId: "a", run: done }));
  deepEqual(state!.runs.a, done);
});

Deno.test("replayPlan() skips an append whose nodes lack a node's shape", () => {
  const bad = { kind: "append", planId: "p1", nodes: [{ id: "q", title: 3 }] };
  const state = replayPlan(entries(start, bad))!;
  deepEqual(state.nodes.map((n) => n.id), ["a", "b"]);
});

Deno.test("replayPlan() says the newest plan is damaged when its record lacks its shape", () => {
  for (
    const plan of [
      { id: "p2", task: "t", nodes: "zz" },
      { id: 5, task: "t", nodes: [node("a")] },
      { id: "p2", task: "t", nodes: [{ id: "a" }] },
    ]
  ) {
    throws(() => replayPlan(entries(start, { kind: "plan", plan })), DamagedPlanError);
  }
});

Deno.test("tern plan -c shows a damaged plan's id as text and runs the steps its records do not say are done", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  const system = (request: ModelRequest) => String(request.messages[0]?.content ?? "");
  const server = await startScriptedServer((request) => {
    if (system(request).startsWith("You plan the work")) {
      return { text: JSON.stringify({ nodes: [node("a"), node("b", ["a"])] }) };
    }
    return { text: "step done" };
  }, { chunkDelayMs: 0 });
  const flags = ["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
  try {
    const first = await runTern(["plan", ...flags, "task"], { cwd: ws.dir, env });
    equal(first.code, 0, first.stderr);
    const path = onlySessionFile(ws.home);
    const lines = (await Deno.readTextFile(path)).trim().split("\n");
    let parentId = JSON.parse(lines.at(-1)!).id;
    const add = (data: unknown) => {
      const id = crypto.randomUUID().slice(0, 8);
      lines.push(
        JSON.stringify({ type: "plan", id, parentId, timestamp: new Date().toISOString(), data }),
      );
      parentId = id;
    };
    const id = "p\u001b]0;pwned\u0007\u001b[31m";
    add({ kind: "plan", plan: newPlanState(id, "the task", [node("a"), node("b", ["a"])]) });
    // A change that says a step is done, with a result no step gives.
    add({ kind: "node", planId: id, nodeId: "a", run: { state: "SUCCEEDED", result: { x: 1 } } });
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const again = await runTern(["plan", ...flags, "-c"], { cwd: ws.dir, env });
    equal(again.code, 0, again.stderr);
    ok(
      !again.stderr.includes("\x1b") && !again.stderr.includes("\x07"),
      JSON.stringify(again.stderr),
    );
    ok(again.stderr.includes("tern: plan p for session"), again.stderr);
    equal(again.stdout, "✓ a: step done\n✓ b: step done\n2 succeeded\n");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("tern plan -c says the newest plan's record is damaged rather than that there is none", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  const server = await startScriptedServer(
    (request) =>
      String(request.messages[0]?.content ?? "").startsWith("You plan the work")
        ? { text: JSON.stringify({ nodes: [node("a")] }) }
        : { text: "step done" },
    { chunkDelayMs: 0 },
  );
  const flags = ["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
  try {
    const first = await runTern(["plan", ...flags, "task"], { cwd: ws.dir, env });
    equal(first.code, 0, first.stderr);
    const path = onlySessionFile(ws.home);
    const parentId = JSON.parse((await Deno.readTextFile(path)).trim().split("\n").at(-1)!).id;
    const damaged = { kind: "plan", plan: { id: "p2", task: "the task", nodes: "zz" } };
    const line = {
      type: "plan",
      id: "d4a3a9e1",
      parentId,
      timestamp: new Date().toISOString(),
      data: damaged,
    };
    await Deno.writeTextFile(path, JSON.stringify(line) + "\n", { append: true });
    const requests = server.requests.length;
    const again = await runTern(["plan", ...flags, "-c"], { cwd: ws.dir, env });
    ok(again.code !== 0, again.stdout);
    ok(again.stderr.includes("cannot continue: its newest plan's record is damaged"), again.stderr);
    ok(!again.stderr.includes("no plan to continue"), again.stderr);
    equal(server.requests.length, requests, "nothing ran");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("replayPlan() refuses a recorded plan that breaks a plan's rules, naming how", () => {
  const chain = Array.from({ length: 5_000 }, (_, n) => node(`n${n}`, n > 0 ? [`n${n - 1}`] : []));
  const cases: Array<[PlanNode[], string]> = [
    [chain, "it has 5000 steps: a plan has at most 50"],
    [[node("a", ["b"]), node("b", ["a"])], "cycle: a → b → a"],
    [[node("a"), node("a")], 'duplicate id "a"'],
    [[node("a", ["a"])], '"a" depends on itself'],
    [[node("../x")], 'node 1 ("../x"): "id" must be 1 to 40 letters'],
    [[node("\u0430")], '"id" must be 1 to 40 letters'], // a Cyrillic look-alike of "a"
    [[node("")], '"id" must be 1 to 40 letters'],
    [[{ ...node("a"), title: "x".repeat(300) }], '"title" must be at most 200 characters'],
  ];
  for (const [nodes, problem] of cases) {
    const plan = { ...newPlanState("p2", "the task", []), nodes };
    let caught: unknown;
    try {
      replayPlan(entries(start, { kind: "plan", plan }));
    } catch (error) {
      caught = error;
    }
    ok(caught instanceof DamagedPlanError, `${problem}: ${caught}`);
    ok(caught.message.includes(problem), caught.message);
  }
});

Deno.test("replayPlan() skips an append that breaks the graph or the node limit", () => {
  const many = Array.from({ length: 49 }, (_, n) => node(`m${n}`));
  for (
    const nodes of [[node("a")], [node("c", ["d"]), node("d", ["c"])], [node("c", ["zz"])], many]
  ) {
    const state = replayPlan(entries(start, { kind: "append", planId: "p1", nodes }))!;
    deepEqual(state.nodes.map((n) => n.id), ["a", "b"]);
    deepEqual(Object.keys(state.runs), ["a", "b"]);
  }
  const good = replayPlan(entries(start, { kind: "append", planId: "p1", nodes: [node("c")] }))!;
  deepEqual(good.nodes.map((n) => n.id), ["a", "b", "c"]);
});

Deno.test("tern plan -c refuses a session's plan of 200 steps before any step runs", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  const server = await startScriptedServer(
    (request) =>
      String(request.messages[0]?.content ?? "").startsWith("You plan the work")
        ? { text: JSON.stringify({ nodes: [node("a")] }) }
        : { text: "step done" },
    { chunkDelayMs: 0 },
  );
  const flags = ["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
  try {
    const first = await runTern(["plan", ...flags, "task"], { cwd: ws.dir, env });
    equal(first.code, 0, first.stderr);
    const path = onlySessionFile(ws.home);
    const parentId = JSON.parse((await Deno.readTextFile(path)).trim().split("\n").at(-1)!).id;
    const wide = Array.from({ length: 200 }, (_, n) => node(`w${n}`));
    const line = {
      type: "plan",
      id: "d4a3a9e1",
      parentId,
      timestamp: new Date().toISOString(),
      data: { kind: "plan", plan: newPlanState("p2", "the task", wide) },
    };
    await Deno.writeTextFile(path, JSON.stringify(line) + "\n", { append: true });
    const requests = server.requests.length;
    const again = await runTern(["plan", ...flags, "-c"], { cwd: ws.dir, env });
    ok(again.code !== 0, again.stdout);
    ok(
      again.stderr.includes(
        "cannot continue: its newest plan breaks the rules every plan is held to (it has 200 " +
          "steps: a plan has at most 50)",
      ),
      again.stderr,
    );
    equal(server.requests.length, requests, "no step ran");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("tern plan -c continues a plan whose title grew past the limit as its key was masked", async () => {
  const ws = await tempWorkspace();
  const key = "k1234567x";
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: key };
  // 199 characters; masked, 219: "[REDACTED]" is longer than the key it hides.
  const title = `${key} `.repeat(20).trim();
  let steps = 0;
  const server = await startScriptedServer((request) => {
    const system = String(request.messages[0]?.content ?? "");
    if (system.startsWith("You plan the work")) {
      return { text: JSON.stringify({ nodes: [{ ...node("a"), title }] }) };
    }
    if (system.startsWith("You repair the plan")) return { text: '{"nodes":[]}' };
    return { text: steps++ === 0 ? "FAILED: not yet" : "step done" };
  }, { chunkDelayMs: 0 });
  const flags = ["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
  try {
    const first = await runTern(["plan", ...flags, "task"], { cwd: ws.dir, env });
    ok(first.stdout.includes("✗ a: reported by the worker: not yet"), first.stdout);
    const again = await runTern(["plan", ...flags, "-c"], { cwd: ws.dir, env });
    equal(again.code, 0, again.stderr);
    equal(again.stdout, "✓ a: step done\n1 succeeded\n");
    ok(!(await Deno.readTextFile(onlySessionFile(ws.home))).includes(key), "the key is masked");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
