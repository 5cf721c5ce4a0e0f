import { deepEqual, equal, match, ok, throws } from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { appendNodes, parsePlan, topologicalOrder, validatePlan } from "../../src/plan/graph.ts";
import { PlanValidationError } from "../../src/plan/errors.ts";
import type { PlanNode } from "../../src/plan/types.ts";

function node(id: string, ...dependsOn: string[]): PlanNode {
  return { id, title: `Title ${id}`, task: `Do ${id}`, dependsOn };
}

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    ok(error instanceof PlanValidationError, `expected PlanValidationError, got ${error}`);
    equal(error.message, `Invalid plan: ${error.problems.join("; ")}`);
    return error.problems;
  }
  throw new Error("expected a PlanValidationError");
}

Deno.test("parsePlan() accepts a valid graph and defaults dependsOn to []", () => {
  const nodes = parsePlan({
    nodes: [
      { id: "a", title: " Read ", task: "Read the code" },
      { id: "b_2-x", title: "Write", task: "Write it", dependsOn: ["a"] },
    ],
  });
  deepEqual(nodes, [
    { id: "a", title: "Read", task: "Read the code", dependsOn: [] },
    { id: "b_2-x", title: "Write", task: "Write it", dependsOn: ["a"] },
  ]);
});

Deno.test("parsePlan() rejects a value that is not a plan object", () => {
  deepEqual(problemsOf(() => parsePlan([])), ['the plan must be a JSON object {"nodes": [...]}']);
  deepEqual(problemsOf(() => parsePlan({})), ['"nodes" must be an array of nodes']);
  deepEqual(problemsOf(() => parsePlan({ nodes: [node("a")], note: 1 })), [
    'unknown key(s) "note" (the plan has only "nodes")',
  ]);
});

Deno.test("parsePlan() rejects an empty plan and one of more than 50 nodes", () => {
  deepEqual(problemsOf(() => parsePlan({ nodes: [] })), [
    '"nodes" is empty: a plan needs at least one node',
  ]);
  const many = Array.from({ length: 51 }, (_, index) => node(`n${index}`));
  deepEqual(problemsOf(() => parsePlan({ nodes: many })), [
    '"nodes" has 51 nodes: a plan has at most 50',
  ]);
  equal(parsePlan({ nodes: many.slice(0, 50) }).length, 50);
});

Deno.test("parsePlan() lists every bad node field, naming the node", () => {
  const problems = problemsOf(() =>
    parsePlan({
      nodes: [
        "a",
        { id: "build it", title: "", task: 3, deps: [] },
        { id: "x".repeat(41), title: "T", task: "T", dependsOn: "a" },
        { id: "q", title: "T", task: "  ", dependsOn: [1] },
      ],
    })
  );
  deepEqual(problems, [
    'node 1: must be an object {"id", "title", "task", "dependsOn"}',
    'node 2 ("build it"): "id" must be 1 to 40 letters, digits, "_" or "-"',
    'node 2 ("build it"): "title" must be a non-empty string',
    'node 2 ("build it"): "task" must be a non-empty string',
    'node 2 ("build it"): unknown key(s) "deps" (a node has "id", "title", "task" and "dependsOn")',
    `node 3 ("${"x".repeat(41)}"): "id" must be 1 to 40 letters, digits, "_" or "-"`,
    `node 3 ("${"x".repeat(41)}"): "dependsOn" must be an array of node ids`,
    'node 4 ("q"): "task" must be a non-empty string',
    'node 4 ("q"): "dependsOn" must list node ids (strings)',
  ]);
});

Deno.test("parsePlan() rejects duplicate ids, naming the id once", () => {
  const problems = problemsOf(() => parsePlan({ nodes: [node("a"), node("b"), node("a")] }));
  deepEqual(problems, ['duplicate id "a"']);
  deepEqual(validatePlan([node("a"), node("a"), node("a")]), ['duplicate id "a"']);
});

Deno.test("parsePlan() rejects a self-dependency", () => {
  deepEqual(problemsOf(() => parsePlan({ nodes: [node("a"), node("b", "b")] })), [
    '"b" depends on itself',
  ]);
});

Deno.test("parsePlan() rejects an unknown dependency", () => {
  deepEqual(problemsOf(() => parsePlan({ nodes: [node("a"), node("b", "a", "x")] })), [
    '"b" depends on unknown "x"',
  ]);
});

Deno.test("validatePlan() rejects a dependency listed twice", () => {
  deepEqual(validatePlan([node("a"), node("b", "a", "a")]), ['"b" depends on "a" twice']);
});

Deno.test("parsePlan() rejects a 3-cycle with its path, from its earliest node", () => {
  const nodes = [node("start"), node("b", "c"), node("a", "b", "start"), node("c", "a")];
  const problems = problemsOf(() => parsePlan({ nodes }));
  deepEqual(problems, ["cycle: b → c → a → b"]);
  match(new PlanValidationError(problems).message, /^Invalid plan: cycle: b → c → a → b$/);
});

Deno.test("validatePlan() reports each of two cycles once, deterministically", () => {
  const nodes = [node("a", "b"), node("b", "a", "c"), node("c", "b"), node("d")];
  const first = validatePlan(nodes);
  deepEqual(first, ["cycle: a → b → a", "cycle: b → c → b"]);
  deepEqual(validatePlan(nodes), first);
});

Deno.test("validatePlan() lists problems of different kinds together", () => {
  deepEqual(validatePlan([node("a", "a"), node("a"), node("b", "zz", "c"), node("c", "b")]), [
    'duplicate id "a"',
    '"a" depends on itself',
    '"b" depends on unknown "zz"',
    "cycle: b → c → b",
  ]);
  deepEqual(validatePlan([node("a"), node("b", "a"), node("c", "a", "b")]), []);
});

Deno.test("topologicalOrder() puts dependencies first and keeps the nodes' order for ties", () => {
  deepEqual(topologicalOrder([node("a"), node("b"), node("c")]), ["a", "b", "c"]);
  deepEqual(
    topologicalOrder([node("d", "c"), node("c", "a"), node("b"), node("a"), node("e", "b", "d")]),
    ["b", "a", "c", "d", "e"],
  );
});

Deno.test("appendNodes() adds nodes that may depend on existing ones", () => {
  const existing = [node("a"), node("b", "a")];
  const result = appendNodes(existing, [node("c", "b"), node("d", "c", "a")]);
  deepEqual(result.map((each) => each.id), ["a", "b", "c", "d"]);
  deepEqual(result[3].dependsOn, ["c", "a"]);
  deepEqual(existing, [node("a"), node("b", "a")]);
});

Deno.test("appendNodes() rejects a duplicate of an existing id, an unknown dependency and a cycle", () => {
  const existing = [node("a"), node("b", "a")];
  deepEqual(problemsOf(() => appendNodes(existing, [node("a")])), ['duplicate id "a"']);
  deepEqual(problemsOf(() => appendNodes(existing, [node("c", "x")])), [
    '"c" depends on unknown "x"',
  ]);
  deepEqual(problemsOf(() => appendNodes(existing, [node("c", "d"), node("d", "c")])), [
    "cycle: c → d → c",
  ]);
  deepEqual(existing, [node("a"), node("b", "a")]);
});

Deno.test("appendNodes() checks the shape of added nodes", () => {
  const bad = { id: "c d", title: "T", task: "", dependsOn: [] };
  deepEqual(problemsOf(() => appendNodes([node("a")], [bad])), [
    'added node 1 ("c d"): "id" must be 1 to 40 letters, digits, "_" or "-"',
    'added node 1 ("c d"): "task" must be a non-empty string',
  ]);
});

Deno.test("PlanValidationError is a TernError named for its class", () => {
  const error = new PlanValidationError(['"b" depends on itself']);
  equal(error.name, "PlanValidationError");
  equal(exitCodeForError(error), 1);
  throws(() => parsePlan({ nodes: [node("a", "a")] }), PlanValidationError);
});

Deno.test("appendNodes() refuses to grow a plan past 50 nodes, changing nothing", () => {
  const existing = parsePlan({ nodes: [node("a")] });
  const many = Array.from({ length: 500 }, (_, index) => node(`n${index}`, "a"));
  deepEqual(problemsOf(() => appendNodes(existing, many)), [
    "adding 500 nodes to 1 makes 501: a plan has at most 50",
  ]);
  deepEqual(existing, [node("a")]);
  equal(appendNodes(existing, many.slice(0, 49)).length, 50);
  deepEqual(problemsOf(() => appendNodes(existing, many.slice(0, 50))), [
    "adding 50 nodes to 1 makes 51: a plan has at most 50",
  ]);
});

Deno.test("validatePlan() finds a cycle at the end of a chain deeper than the call stack", () => {
  const length = 50_000;
  const chain = Array.from(
    { length },
    (_, index) => node(`n${index}`, `n${(index + 1) % length}`),
  );
  deepEqual(validatePlan(chain.slice(0, -1).concat(node(`n${length - 1}`))), []);
  deepEqual(validatePlan([node("x", "y"), node("y", "x")]), ["cycle: x → y → x"]);
  const problems = validatePlan(chain);
  equal(problems.length, 1);
  ok(problems[0].startsWith("cycle: n0 → n1 → n2"), problems[0].slice(0, 80));
});
