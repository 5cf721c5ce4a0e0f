/** spawn_agent and wait_agent as the model sees them before their code (and zod) loads. */
import { deepEqual } from "node:assert/strict";
import { subagentToolImplementations } from "../../src/harness/subagents/tools.ts";
import { subagentTools } from "../../src/harness/subagents/tool_specs.ts";
import type { SubagentHost } from "../../src/harness/subagents/host.ts";

Deno.test("subagentTools() shows the model exactly what the zod-defined tools describe", () => {
  const host = {} as SubagentHost;
  const shown = subagentTools(host).map(({ name, description, readOnly, runsIn, parameters }) => ({
    name,
    description,
    readOnly,
    runsIn,
    parameters,
  }));
  const defined = subagentToolImplementations(host).map((tool) => ({
    name: tool.name,
    description: tool.description,
    readOnly: tool.readOnly,
    runsIn: tool.runsIn,
    parameters: tool.parameters,
  }));
  deepEqual(shown, defined);
});
