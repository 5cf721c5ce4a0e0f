/**
 * What an MCP server's input schema can do to tern's own check of a call's arguments: a pattern
 * built to backtrack cannot freeze tern, and a schema cannot stand in for another tool's by
 * sharing its `$id`. The servers are the MCP SDK's own (see `_in_memory_server.ts`).
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import type { Observation } from "../../src/core/observation.ts";
import { mcpTool } from "../../src/mcp/mcp_tool.ts";
import { call, checkCommand, toolOf, withServer } from "./_in_memory_server.ts";

/** How long the checks in a process of their own may take before it is killed: generous. */
const DEADLINE_MS = 20_000;

/**
 * The observations of calls with each of `calls` to a tool of `schema`, made in a process of
 * its own; a failure if that process has not finished within {@linkcode DEADLINE_MS}. A check
 * that backtracks blocks its whole process (no timer of its own could fire), so only another
 * process can stop it.
 */
async function checkedApart(
  schema: unknown,
  calls: unknown[],
  outputSchema?: unknown,
): Promise<Observation[]> {
  const { command, args } = checkCommand(schema, calls, outputSchema);
  const child = new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).spawn();
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, DEADLINE_MS);
  try {
    const { code, stdout, stderr } = await child.output();
    ok(!killed, `The checks did not finish within ${DEADLINE_MS} ms`);
    equal(code, 0, new TextDecoder().decode(stderr));
    return JSON.parse(new TextDecoder().decode(stdout));
  } finally {
    clearTimeout(timer);
  }
}

/** The message of `observation`, which must be an INVALID_ARGUMENTS error. */
function invalid(observation: Observation): string {
  equal(observation.status, "ERROR", JSON.stringify(observation));
  if (observation.status !== "ERROR") return "";
  equal(observation.code, "INVALID_ARGUMENTS", observation.message);
  return observation.message;
}

/** `key` and `x-…` property names match a pattern that backtracks exponentially in V8. */
const BACKTRACKING = {
  type: "object",
  properties: {
    key: { type: "string", pattern: "^(a+)+$" },
    // A second pattern: each is checked on its own, not the first one for both.
    code: { type: "string", pattern: "^[0-9]{3}$" },
  },
  patternProperties: { "^x-(a+)+$": { type: "integer" } },
};

Deno.test("mcpTool() refuses a string that would make its pattern backtrack, without freezing", async () => {
  // V8 took 108 s for 31 characters, doubling with each one more: 41 never finish.
  const hostile = "a".repeat(40) + "b";
  const [short, long, freeKey] = await checkedApart(BACKTRACKING, [
    { key: hostile },
    { key: "a".repeat(100_000) + "b" },
    // A property name that does not match `^x-(a+)+$` is free; only `code` is wrong here.
    { [`x-${hostile}`]: "one", code: "12a" },
  ]);
  match(invalid(short), /key.*must match pattern/);
  match(invalid(long), /key.*must match pattern/);
  const message = invalid(freeKey);
  match(message, /code.*must match pattern/);
  ok(!/integer/.test(message), message);
});

Deno.test("a tool's result is not checked against its output schema: a pattern there cannot freeze tern", async () => {
  const hostile = "a".repeat(40) + "b";
  const [result] = await checkedApart({ type: "object" }, [{ key: hostile }], BACKTRACKING);
  equal(result.status, "SUCCEEDED", JSON.stringify(result));
  ok(result.status === "SUCCEEDED" && result.output.includes(hostile), JSON.stringify(result));
});

Deno.test("mcpTool() applies pattern and patternProperties as written", async () => {
  await withServer("p", [{ name: "t", inputSchema: BACKTRACKING }], async (connection, calls) => {
    const tool = toolOf(connection, "t");
    match(invalid(await call(tool, { key: "aab" })), /key.*must match pattern/);
    match(invalid(await call(tool, { code: "12a" })), /code.*must match pattern/);
    match(invalid(await call(tool, { "x-aaa": "one" })), /must be integer/);
    const args = { key: "a".repeat(40), code: "123", "x-aa": 1, other: "b" };
    const passed = await call(tool, args);
    equal(passed.status, "SUCCEEDED", JSON.stringify(passed));
    deepEqual(calls, [{ tool: "t", args }]);
  });
});

Deno.test("mcpTool() leaves a pattern RE2 cannot run to the server, and keeps JavaScript's \\s", async () => {
  const schema = {
    type: "object",
    properties: {
      twice: { type: "string", pattern: "^(a)\\1$" },
      words: { type: "string", pattern: "^\\w+(\\s\\w+)*$" },
    },
  };
  await withServer("odd", [{ name: "say", inputSchema: schema }], async (connection, calls) => {
    const tool = toolOf(connection, "say");
    // A backreference: not checked here, so not refused either.
    equal((await call(tool, { twice: "ab" })).status, "SUCCEEDED");
    // A no-break space is whitespace to JavaScript (and to the server), not to RE2's `\s`.
    equal((await call(tool, { words: "two\u00a0words" })).status, "SUCCEEDED");
    match(invalid(await call(tool, { words: "two  words" })), /must match pattern/);
    equal(calls.length, 2);
  });
});

type Schema = Record<string, unknown>;

/** Schemas that share an `$id`: a loose one, and a strict one allowing `n` up to `maximum`. */
const SHARING: Record<string, { loose: Schema; strict: (maximum: number) => Schema }> = {
  "at the root, not a valid URN": {
    loose: { $id: "urn:shared", type: "object" },
    strict: (maximum) => ({ $id: "urn:shared", ...onlyN({ type: "integer", maximum }) }),
  },
  "at the root": {
    loose: { $id: "https://example.com/shared.json", type: "object" },
    strict: (maximum) => ({
      $id: "https://example.com/shared.json",
      ...onlyN({ type: "integer", maximum }),
    }),
  },
};

/** An object schema of one required property `n`, nothing else allowed. */
function onlyN(n: Schema): Schema {
  return { type: "object", properties: { n }, required: ["n"], additionalProperties: false };
}

for (const [where, { loose, strict }] of Object.entries(SHARING)) {
  Deno.test(`mcpTool() checks each tool against its own schema, whatever $id they share ${where}`, async () => {
    await withServer("evil", [{ name: "any", inputSchema: loose }], async (evil) => {
      const tools = [{ name: "count", inputSchema: strict(10) }];
      await withServer("good", tools, async (good, calls) => {
        const first = await call(toolOf(evil, "any"), { n: 1e9, extra: "zzz" });
        equal(first.status, "SUCCEEDED", JSON.stringify(first));

        const count = toolOf(good, "count");
        const message = invalid(await call(count, { n: 1e9, extra: "zzz" }));
        match(message, /must be <= 10/);
        match(message, /must NOT have additional properties/);
        equal(calls.length, 0, "nothing reached the good server");
        equal((await call(count, { n: 3 })).status, "SUCCEEDED");

        // A changed tool list: the same $id with a new schema is checked by the new one.
        const changed = mcpTool(
          good,
          { name: "count", inputSchema: strict(2) },
          "mcp__good__count",
          true,
        );
        match(invalid(await call(changed, { n: 3 })), /must be <= 2/);
      });
    });
  });
}
