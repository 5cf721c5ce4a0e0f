/**
 * Node ids are the model's text. One named like a member every object inherits (`constructor`,
 * `toString`, `__proto__`…) is a node like any other, and one that holds a key tern knows of is
 * rejected without being quoted: the session masks values but not the names of an object's
 * members, so such an id would be shown and would split the plan's records.
 */
import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import type { Script } from "../../src/llm/scripted.ts";
import { PlanningError, PlanValidationError } from "../../src/plan/errors.ts";
import { PlanExecutor } from "../../src/plan/executor.ts";
import { appendNodes, parsePlan } from "../../src/plan/graph.ts";
import { planTask, replanAfterFailure } from "../../src/plan/planner.ts";
import {
  DamagedPlanError,
  newPlanState,
  type PlanRecord,
  replayPlan,
} from "../../src/plan/record.ts";
import type { PlanNode, PlanState } from "../../src/plan/types.ts";
import type { SessionEntry } from "../../src/session/types.ts";
import { SecretMasker } from "../../src/sandbox/secrets.ts";
import { startScriptedServer } from "../support/scripted_server.ts";

const MEMBERS = ["constructor", "toString", "hasOwnProperty", "valueOf", "__proto__"];
const KEY = "sk-plan-test-0001secretABCDEF";
const masker = new SecretMasker([KEY]);
const mask = (text: string) => masker.mask(text);

function node(id: string, dependsOn: string[] = []): PlanNode {
  return { id, title: `Do ${id}`, task: `Do the ${id} step`, dependsOn };
}

/** Session entries holding `records`, as a session file gives them back (through JSON). */
function entries(records: PlanRecord[]): SessionEntry[] {
  return JSON.parse(JSON.stringify(records.map((data, n) => ({
    type: "plan",
    id: `e${n}`,
    parentId: n === 0 ? null : `e${n - 1}`,
    timestamp: "2026-01-01T00:00:00.000Z",
    data,
  }))));
}

Deno.test("replayPlan() gives appended nodes named like object members runs of their own", () => {
  const state = replayPlan(entries([
    { kind: "plan", plan: newPlanState("p1", "task", [node("a"), node("b")]) },
    { kind: "node", planId: "p1", nodeId: "a", run: { state: "FAILED", error: "no" } },
    { kind: "append", planId: "p1", nodes: MEMBERS.map((id) => node(id, ["b"])) },
    { kind: "node", planId: "p1", nodeId: "toString", run: { state: "SUCCEEDED", result: "ok" } },
  ]))!;
  deepEqual(state.nodes.map((each) => each.id), ["a", "b", ...MEMBERS]);
  for (const id of MEMBERS) {
    ok(Object.hasOwn(state.runs, id), `${id} has no run of its own`);
    equal(state.runs[id].state, id === "toString" ? "SUCCEEDED" : "WAITING", id);
  }
  deepEqual(Object.keys(state.runs).sort(), ["a", "b", ...MEMBERS].sort());
});

Deno.test("replayPlan() rebuilds the runs from the nodes, whatever the recorded runs' keys", () => {
  // The session masks values, not the names of an object's members: the runs' keys as written.
  const plan: PlanState = {
    id: "p1",
    task: "task",
    nodes: [node("a"), node("b", ["a"])],
    runs: { [KEY]: { state: "SUCCEEDED", result: "x" }, b: { state: "WAITING" } },
  };
  const state = replayPlan(entries([
    { kind: "plan", plan },
    { kind: "node", planId: "p1", nodeId: "a", run: { state: "SUCCEEDED", result: "x" } },
  ]))!;
  deepEqual(Object.keys(state.runs).sort(), ["a", "b"]);
  equal(state.runs.a.state, "SUCCEEDED");
});

Deno.test("replayPlan() refuses a plan whose ids were masked (written before keys were refused)", () => {
  const plan: PlanState = {
    id: "p1",
    task: "task",
    nodes: [node("[REDACTED]"), node("b", ["[REDACTED]"])],
    runs: { [KEY]: { state: "WAITING" }, b: { state: "WAITING" } },
  };
  let caught: unknown;
  try {
    replayPlan(entries([{ kind: "plan", plan }]));
  } catch (error) {
    caught = error;
  }
  ok(caught instanceof DamagedPlanError, String(caught));
  ok(!caught.message.includes(KEY), caught.message);
  ok(caught.message.includes('"id" must be 1 to 40 letters'), caught.message);
});

Deno.test("PlanExecutor runs nodes named like object members and keeps each one's run", async () => {
  const nodes = [node("__proto__"), node("constructor", ["__proto__"]), node("toString")];
  const ran: string[] = [];
  const executor = new PlanExecutor({
    // No run recorded yet: each node is WAITING, none reads a member `{}` inherits.
    state: { id: "p1", task: "task", nodes, runs: {} },
    runNode: (each) => {
      ran.push(each.id);
      return Promise.resolve({ ok: true, text: `${each.id} done` });
    },
  });
  const { state } = await executor.run();
  deepEqual(ran.sort(), ["__proto__", "constructor", "toString"]);
  for (const { id } of nodes) {
    ok(Object.hasOwn(state.runs, id), `${id} has no run of its own`);
    equal(state.runs[id].result, `${id} done`);
  }
});

Deno.test("parsePlan() and appendNodes() refuse an id or a dependency holding a key, unquoted", () => {
  const cases: Array<[string, () => unknown]> = [
    ["id", () => parsePlan({ nodes: [node(KEY), node("b", [KEY])] }, { mask })],
    ["dependsOn", () => parsePlan({ nodes: [node("a"), node("b", [`a-${KEY}`])] }, { mask })],
    ["added id", () => appendNodes([node("a")], [node(`x-${KEY}`)], { mask })],
    ["added dependsOn", () => appendNodes([node("a")], [node("c", [KEY])], { mask })],
    [
      "format",
      () => parsePlan({ nodes: [node("ghp_abcdefghijklmnopqrstuvwxyz0123456789")] }, { mask }),
    ],
  ];
  for (const [what, parse] of cases) {
    throws(parse, (error) => {
      ok(error instanceof PlanValidationError, what);
      ok(!error.message.includes(KEY) && !error.message.includes("ghp_"), error.message);
      ok(/holds a key tern knows of/.test(error.message), error.message);
      return true;
    });
  }
  // Words that only look like a key's name are plain ids.
  deepEqual(
    parsePlan({ nodes: [node("password-reset"), node("api-key", ["password-reset"])] }, { mask })
      .map((each) => each.id),
    ["password-reset", "api-key"],
  );
});

Deno.test("parsePlan() and appendNodes() never quote part of a long key in a shape problem", () => {
  // Longer than the 60 characters a problem quotes, and of no format a masker knows by sight.
  const long = `plainkey${"Q7w".repeat(30)}`;
  const own = new SecretMasker([long]);
  const maskLong = (text: string) => own.mask(text);
  const cases: Array<[string, () => unknown]> = [
    ["id", () => parsePlan({ nodes: [{ ...node(long), title: "" }] }, { mask: maskLong })],
    ["key", () => parsePlan({ nodes: [{ ...node("a"), [long]: 1 }] }, { mask: maskLong })],
    ["plan key", () => parsePlan({ nodes: [node("a")], [long]: 1 }, { mask: maskLong })],
    ["added id", () => appendNodes([], [{ ...node(long), task: "" }], { mask: maskLong })],
    [
      "added key",
      () => appendNodes([], [{ ...node("a"), [long]: 1 } as PlanNode], { mask: maskLong }),
    ],
  ];
  for (const [what, parse] of cases) {
    throws(parse, (error) => {
      ok(error instanceof PlanValidationError, what);
      ok(!error.message.includes(long.slice(0, 20)), `${what}: ${error.message}`);
      return true;
    });
  }
});

/** A scripted model that answers the planner with `answers` in turn. */
async function withAnswers(
  answers: unknown[][],
  body: (provider: ReturnType<typeof createOpenAiChatProvider>) => Promise<void>,
): Promise<void> {
  let n = 0;
  const script: Script = () => ({ text: JSON.stringify({ nodes: answers[n++] }) });
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  try {
    const provider = createOpenAiChatProvider({ baseUrl: server.baseUrl, apiKey: "sk-test" });
    await body(provider);
    // What tern sent after the model's answer: its correction, never the key.
    for (const request of server.requests.slice(1)) {
      const sent = request.modelRequest.messages.filter((m) => m.role !== "assistant");
      ok(!JSON.stringify(sent).includes(KEY), JSON.stringify(sent).slice(-400));
      ok(/holds a key tern knows of/.test(JSON.stringify(sent.at(-1))));
    }
  } finally {
    await server.close();
  }
}

Deno.test("planTask() sends a plan whose id holds a key back to the model, unquoted", async () => {
  await withAnswers([[node(KEY), node("b", [KEY])], [node("a"), node("b", ["a"])]], async (p) => {
    const draft = await planTask({ provider: p, model: "m", task: "t", mask });
    equal(draft.attempts, 2);
    deepEqual(draft.nodes.map((each) => each.id), ["a", "b"]);
  });
  await withAnswers([[node(KEY)], [node("ok", [KEY])]], async (p) => {
    const error = await planTask({ provider: p, model: "m", task: "t", mask }).catch((e) => e);
    ok(error instanceof PlanningError, String(error));
    ok(!error.message.includes(KEY) && !error.problems.join().includes(KEY), error.message);
  });
});

Deno.test("replanAfterFailure() sends added nodes whose id holds a key back, unquoted", async () => {
  const state = newPlanState("p1", "t", [node("a"), node("b")]);
  state.runs.a = { state: "FAILED", error: "no" };
  state.runs.b = { state: "SUCCEEDED", result: "ok" };
  const failed = { node: node("a"), error: "no" };
  await withAnswers([[node(`fix-${KEY}`, ["b"])], [node("fix", ["b"])]], async (p) => {
    const added = await replanAfterFailure({ provider: p, model: "m", state, failed, mask });
    deepEqual(added.map((each) => each.id), ["fix"]);
  });
});
