import { deepEqual, equal } from "node:assert/strict";
import { z } from "zod";
import { COPY, copyJson, MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "../../src/core/json_depth.ts";
import { defineTool } from "../../src/tools/define.ts";

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

Deno.test("nestsDeeperThan() counts arrays and objects, and walks 1,000,000 levels", () => {
  equal(nestsDeeperThan(nested(MAX_ARGUMENT_DEPTH)), false);
  equal(nestsDeeperThan(nested(MAX_ARGUMENT_DEPTH + 1)), true);
  equal(nestsDeeperThan({ a: [1, { b: "x" }], c: null }, 3), false);
  equal(nestsDeeperThan({ a: [1, { b: {} }] }, 3), true);
  equal(nestsDeeperThan(JSON.parse("[".repeat(1_000_000) + "]".repeat(1_000_000))), true);
});

Deno.test("defineTool() refuses arguments nested 10,000 deep as INVALID_ARGUMENTS", async () => {
  const tool = defineTool({
    name: "echo",
    description: "echo",
    parameters: z.strictObject({ value: z.unknown() }),
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute: (args) => Promise.resolve({ output: JSON.stringify(args).slice(0, 10) }),
  });
  const observation = await tool.run({ value: nested(10_000) }, {
    workspace: "/",
    signal: new AbortController().signal,
  });
  equal(observation.status, "ERROR");
  equal(observation.status === "ERROR" && observation.code, "INVALID_ARGUMENTS");
});

Deno.test("copyJson() copies 1,000,000 levels, keeps key order and a __proto__ key, and takes the visitor's values", () => {
  const deep = JSON.parse("[".repeat(1_000_000) + '"x"' + "]".repeat(1_000_000));
  const copy = copyJson(deep, (value) => value === "x" ? "y" : COPY);
  equal(JSON.stringify(copy), "[".repeat(1_000_000) + '"y"' + "]".repeat(1_000_000));
  const record = JSON.parse('{"b":1,"__proto__":{"p":1},"a":[{"c":2},"keep"],"d":"s"}');
  const out = copyJson(record, (value, { key }) => key === "c" ? 3 : value === "s" ? "t" : COPY);
  equal(JSON.stringify(out), '{"b":1,"__proto__":{"p":1},"a":[{"c":3},"keep"],"d":"t"}');
  equal(Object.getPrototypeOf(out), Object.prototype);
  deepEqual(record.a, [{ c: 2 }, "keep"], "the input is not changed");
  equal(copyJson("s", () => COPY), "s");
});
