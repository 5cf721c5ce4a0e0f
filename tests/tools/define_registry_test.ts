import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { z } from "zod";
import { ToolError } from "../../src/core/observation.ts";
import { defineTool, type ToolDefinition } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { truncateMiddle } from "../../src/tools/truncate.ts";

const ctx = () => ({ workspace: "/nonexistent", signal: new AbortController().signal });

function sample(execute: (args: { path: string }) => Promise<{ output: string }>) {
  return defineTool({
    name: "sample",
    description: "a sample tool",
    parameters: z.strictObject({ path: z.string().describe("a path") }),
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    maxOutputChars: 500,
    execute,
  });
}

Deno.test("defineTool() rejects missing, wrong-typed and extra fields without running", async () => {
  let ran = 0;
  const tool = sample(() => {
    ran++;
    return Promise.resolve({ output: "ran" });
  });
  for (const args of [{}, { path: 3 }, { path: "a", extra: true }, "text", null]) {
    const obs = await tool.run(args, ctx());
    ok(obs.status === "ERROR" && obs.code === "INVALID_ARGUMENTS", JSON.stringify(args));
  }
  const extra = await tool.run({ path: "a", extra: true }, ctx());
  ok(extra.status === "ERROR" && extra.message.includes('"extra"'));
  equal(ran, 0);
});

Deno.test("defineTool() with a JSON Schema runs and refuses calls as the same schema in zod does", async () => {
  const seen: unknown[] = [];
  type Args = z.ZodType<{ path: string; limit?: number }>;
  const make = (parameters: ToolDefinition<Args>["parameters"]) =>
    defineTool<Args>({
      name: "sample",
      description: "a sample tool",
      parameters,
      readOnly: true,
      runsIn: "host",
      paths: (args) => [{ path: args.path, write: false }],
      execute: (args) => {
        seen.push(args);
        return Promise.resolve({ output: `${args.path} ${args.limit ?? "-"}` });
      },
    });
  const zodTool = make(
    z.strictObject({
      path: z.string().min(1).describe("a path"),
      limit: z.number().int().min(1).max(10).optional(),
    }),
  );
  const jsonTool = make({ jsonSchema: zodTool.parameters });
  deepEqual(jsonTool.parameters, zodTool.parameters);
  const calls = [
    { path: "a" },
    { path: "a", limit: 3 },
    {},
    { path: "" },
    { path: 3 },
    { path: "a", limit: 11 },
    { path: "a", limit: 1.5 },
    { path: "a", extra: true },
    "text",
    null,
  ];
  for (const args of calls) {
    const [viaJson, viaZod] = [await jsonTool.run(args, ctx()), await zodTool.run(args, ctx())];
    deepEqual(viaJson, viaZod, JSON.stringify(args));
    deepEqual(await jsonTool.paths(args), await zodTool.paths(args), JSON.stringify(args));
  }
  const refused = await jsonTool.run({ path: "a", extra: true }, ctx());
  ok(refused.status === "ERROR" && refused.message.includes('unknown field(s) "extra"'));
  // The body gets a copy, as zod gives one: what it does to it does not reach the caller.
  const args = { path: "a" };
  await jsonTool.run(args, ctx());
  ok(seen.at(-1) !== args);
  deepEqual(seen.at(-1), args);
});

Deno.test("defineTool() maps thrown errors to observation codes", async () => {
  const cases: [unknown, string][] = [
    [new ToolError("POLICY_DENIED", "no"), "POLICY_DENIED"],
    [new Deno.errors.NotFound("gone"), "NOT_FOUND"],
    [new Deno.errors.NotCapable("flags"), "POLICY_DENIED"],
    [new Error("boom"), "EXECUTION_FAILED"],
  ];
  for (const [error, code] of cases) {
    const obs = await sample(() => Promise.reject(error)).run({ path: "a" }, ctx());
    ok(obs.status === "ERROR" && obs.code === code, `${error} → ${JSON.stringify(obs)}`);
  }
});

Deno.test("defineTool() caps long output keeping head and tail", async () => {
  const long = "H" + "x".repeat(2000) + "T";
  const obs = await sample(() => Promise.resolve({ output: long })).run({ path: "a" }, ctx());
  if (obs.status !== "SUCCEEDED") throw new Error("expected success");
  ok(obs.output.length <= 560, String(obs.output.length));
  ok(obs.output.startsWith("H") && obs.output.endsWith("T"));
  ok(obs.output.includes("characters"));
});

Deno.test("defineTool() generates a JSON Schema from the zod schema", () => {
  const tool = sample(() => Promise.resolve({ output: "" }));
  deepEqual(tool.parameters, {
    type: "object",
    properties: { path: { type: "string", description: "a path" } },
    required: ["path"],
    additionalProperties: false,
  });
});

Deno.test("defineTool() returns CANCELLED when the signal has fired", async () => {
  const controller = new AbortController();
  controller.abort();
  const obs = await sample(() => Promise.resolve({ output: "ran" })).run({ path: "a" }, {
    workspace: "/",
    signal: controller.signal,
  });
  ok(obs.status === "ERROR" && obs.code === "CANCELLED");
});

Deno.test("ToolRegistry refuses two tools with one name and lists specs in order", () => {
  const a = sample(() => Promise.resolve({ output: "" }));
  const registry = new ToolRegistry([a]);
  throws(() => registry.register(a), /name is taken/);
  deepEqual(registry.specs().map((s) => s.name), ["sample"]);
  equal(registry.get("missing"), undefined);
});

Deno.test("truncateMiddle() leaves short text alone and marks the cut", () => {
  equal(truncateMiddle("short", 100), "short");
  const text = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n");
  const cut = truncateMiddle(text, 300);
  ok(cut.length < 400);
  ok(cut.startsWith("line 0\n") && cut.endsWith("line 999"));
  ok(/\[\.\.\. \d+ characters \(\d+ lines\) cut \.\.\.\]/.test(cut));
});

Deno.test("truncateMiddle() never parts an emoji at either cut, whatever the cap", () => {
  const text = "😀".repeat(5_000);
  for (let cap = 150; cap < 400; cap++) {
    const cut = truncateMiddle(text, cap);
    ok(cut.isWellFormed(), `cap ${cap}`);
    const cutChars = Number(/\[\.\.\. (\d+) characters/.exec(cut)![1]);
    const kept = cut.replace(/\n\[\.\.\. .* cut \.\.\.\]\n/, "");
    equal(kept.length + cutChars, text.length, `cap ${cap}: the count is of what was cut`);
  }
});
