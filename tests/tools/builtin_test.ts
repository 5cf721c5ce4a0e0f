import { deepEqual, equal } from "node:assert/strict";
import { builtinTools } from "../../src/tools/mod.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { assertJsonSnapshot } from "./_snapshot.ts";

Deno.test("builtinTools() returns the seven tools in order with their read-only flags", () => {
  const tools = builtinTools();
  deepEqual(
    tools.map((t) => [t.name, t.readOnly]),
    [
      ["read", true],
      ["write", false],
      ["edit", false],
      ["list", true],
      ["glob", true],
      ["grep", true],
      ["bash", false],
    ],
  );
  equal(new ToolRegistry(tools).names.length, 7);
});

Deno.test("builtinTools() JSON schemas and descriptions match the snapshot", async () => {
  const specs = builtinTools().map((tool) => ({
    name: tool.name,
    readOnly: tool.readOnly,
    description: tool.description,
    parameters: tool.parameters,
  }));
  await assertJsonSnapshot(new URL("./schemas.snapshot.json", import.meta.url), specs);
});

Deno.test("builtinTools() schemas are strict objects", () => {
  for (const tool of builtinTools()) {
    equal(tool.parameters.type, "object", tool.name);
    equal(tool.parameters.additionalProperties, false, tool.name);
  }
});
