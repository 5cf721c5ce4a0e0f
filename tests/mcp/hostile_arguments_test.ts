/**
 * What a hostile model's arguments can make tern's check of them cost: never time beyond linear
 * in what it wrote, whatever keywords the server's schema uses.
 */
import { equal, ok } from "node:assert/strict";
import { mcpTool } from "../../src/mcp/mcp_tool.ts";
import type { McpCallResult } from "../../src/mcp/results.ts";

Deno.test("mcpTool() checks a long array against uniqueItems without comparing every pair", async () => {
  const calls: unknown[] = [];
  const connection = {
    name: "srv",
    callTool: (_tool: string, args: unknown): Promise<McpCallResult> => {
      calls.push(args);
      return Promise.resolve({ content: [{ type: "text", text: "ok" }] });
    },
  };
  const tool = mcpTool(
    connection,
    {
      name: "tag",
      inputSchema: {
        type: "object",
        properties: { tags: { type: "array", uniqueItems: true }, n: { type: "integer" } },
      },
    },
    "mcp__srv__tag",
    false,
  );
  const signal = new AbortController().signal;
  // The first call loads Ajv and compiles the schema.
  equal((await tool.run({ tags: [] }, { signal })).status, "SUCCEEDED");
  // Other keywords are still checked.
  equal((await tool.run({ n: "x" }, { signal })).status, "ERROR");
  // 40,000 distinct one-item arrays (about 300 KB of JSON): every pair compared took 12 s.
  const tags = Array.from({ length: 40_000 }, (_, i) => [i]);
  const started = performance.now();
  const result = await tool.run({ tags }, { signal });
  const took = performance.now() - started;
  equal(result.status, "SUCCEEDED");
  ok(took < 1500, `${Math.round(took)} ms`);
  equal(calls.length, 2);
});

Deno.test("mcpTool() leaves a schema of thousands of property-name patterns to the server", async () => {
  const connection = {
    name: "srv",
    callTool: () => Promise.resolve({ content: [{ type: "text", text: "ok" }] }),
  };
  const patterns: Record<string, unknown> = {};
  for (let i = 0; i < 2000; i++) patterns[`^q${i}x`] = { type: "string" };
  const many = mcpTool(
    connection,
    {
      name: "many",
      inputSchema: {
        type: "object",
        properties: { v: { type: "object", patternProperties: patterns } },
      },
    },
    "mcp__srv__many",
    false,
  );
  const v = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 1]));
  const signal = new AbortController().signal;
  const started = performance.now();
  equal((await many.run({ v }, { signal })).status, "SUCCEEDED");
  const took = performance.now() - started;
  // Compiling those patterns took 6 s, and checking 5,000 keys against them 6 s more.
  ok(took < 1500, `${Math.round(took)} ms`);
  // A few patterns are still checked.
  const few = mcpTool(
    connection,
    {
      name: "few",
      inputSchema: {
        type: "object",
        properties: { v: { type: "object", patternProperties: { "^k": { type: "string" } } } },
      },
    },
    "mcp__srv__few",
    false,
  );
  equal((await few.run({ v: { k1: 1 } }, { signal })).status, "ERROR");
});
