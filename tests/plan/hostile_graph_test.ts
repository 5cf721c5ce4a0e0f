/**
 * A planner's graph built to flood: an id or a title a megabyte long, a node depending on
 * thousands of unknown ids. Titles and tasks have a length limit, told to the model. The rejection is shown to the person and sent back to the model, so it quotes
 * at most 60 characters of an id and lists at most ten problems, counting the rest.
 */
import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { appendNodes, parsePlan } from "../../src/plan/graph.ts";
import { PlanValidationError } from "../../src/plan/errors.ts";

const node = (id: string, dependsOn: string[] = []) => ({
  id,
  title: `Step ${id}`,
  task: `Do ${id}.`,
  dependsOn,
});

/** The error `fn` throws, checked to be short and to list at most 11 lines. */
function rejection(fn: () => unknown): PlanValidationError {
  let caught: unknown;
  throws(() => {
    try {
      fn();
    } catch (error) {
      caught = error;
      throw error;
    }
  }, PlanValidationError);
  const error = caught as PlanValidationError;
  ok(error.message.length < 2_000, `${error.message.length} characters`);
  ok(error.problems.length <= 11, `${error.problems.length} problems`);
  return error;
}

Deno.test("parsePlan() quotes at most 60 characters of an overlong id", () => {
  const long = "x".repeat(1_000_000);
  const error = rejection(() => parsePlan({ nodes: [node(long), node("b", [long])] }));
  ok(error.message.includes(`node 1 ("${"x".repeat(60)}…")`), error.message);
});

Deno.test("parsePlan() and appendNodes() count the problems past the tenth", () => {
  // As many as a node may list (49): a longer list is refused by its length alone.
  const unknown = Array.from({ length: 48 }, (_, n) => `missing-${n}`);
  const error = rejection(() => parsePlan({ nodes: [node("a", unknown)] }));
  equal(error.problems.at(-1), "and 38 more problems");
  equal(error.problems[0], '"a" depends on unknown "missing-0"');
  const long = "y".repeat(100_000);
  const added = rejection(() => appendNodes([node("a")], [node("b", [long, ...unknown])]));
  equal(added.problems[0], `"b" depends on unknown "${"y".repeat(60)}…"`);
  equal(added.problems.at(-1), "and 39 more problems");
});

Deno.test("parsePlan() and appendNodes() refuse a title or a task of megabytes, saying the limit", () => {
  const huge = {
    id: "a",
    title: "t".repeat(1_000_000),
    task: "x".repeat(5_000_000),
    dependsOn: [],
  };
  const error = rejection(() => parsePlan({ nodes: [huge] }));
  deepEqual(error.problems, [
    'node 1 ("a"): "title" must be at most 200 characters: a few words',
    'node 1 ("a"): "task" must be at most 20000 characters',
  ]);
  const added = rejection(() => appendNodes([node("b")], [huge]));
  equal(added.problems.length, 2);
  // The longest allowed still passes.
  parsePlan({ nodes: [{ ...huge, title: "t".repeat(200), task: "x".repeat(20_000) }] });
});

Deno.test("parsePlan() and appendNodes() quote a few unknown keys, each cut, and count the rest", () => {
  const keys = Object.fromEntries(
    Array.from({ length: 1_000 }, (_, n) => [`k${n}${"x".repeat(10_000)}`, 1]),
  );
  const flooded = { ...node("a"), ...keys };
  for (
    const attempt of [
      () => parsePlan({ nodes: [flooded] }),
      () => parsePlan({ nodes: [node("a")], ...keys }),
      () => appendNodes([], [flooded]),
    ]
  ) {
    const error = rejection(attempt);
    ok(error.message.length < 1_000, `${error.message.length} characters`);
    ok(error.message.includes("and 995 more"), error.message);
    ok(error.message.includes(`"k0${"x".repeat(58)}…"`), error.message);
  }
});

Deno.test("parsePlan() and appendNodes() refuse a dependency list longer than a plan, by its length", () => {
  // Hundreds of thousands of entries once overflowed the call stack: an internal error, not a
  // problem the model is told of.
  for (
    const deps of [
      Array(300_000).fill("a"),
      Array.from({ length: 300_000 }, (_, n) => `x${n}`),
    ]
  ) {
    const error = rejection(() => parsePlan({ nodes: [node("a"), node("b", deps)] }));
    deepEqual(error.problems, [
      'node 2 ("b"): "dependsOn" has 300000 ids: a node depends on at most 49 others',
    ]);
    const added = rejection(() => appendNodes([node("a")], [node("b", deps)]));
    deepEqual(added.problems, [
      'added node 1 ("b"): "dependsOn" has 300000 ids: a node depends on at most 49 others',
    ]);
  }
  // A node depending on every other node of a full plan is still a plan.
  const ids = Array.from({ length: 49 }, (_, n) => `n${n}`);
  parsePlan({ nodes: [...ids.map((id) => node(id)), node("last", ids)] });
});
