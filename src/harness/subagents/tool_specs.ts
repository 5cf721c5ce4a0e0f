/**
 * spawn_agent and wait_agent as the model sees them (name, description, JSON schema), with
 * their code (src/harness/subagents/tools.ts, zod-validated) loaded at their first call: a
 * session that may spawn children sends its first request without loading zod. A test keeps
 * these schemas equal to the ones tools.ts's zod schemas give.
 */
import type { JsonSchema } from "../../core/tool_spec.ts";
import type { Tool } from "../../tools/define.ts";
import type { SubagentHost } from "./host.ts";
import { SPAWN_AGENT_DESCRIPTION, WAIT_AGENT_DESCRIPTION } from "./constants.ts";

/** spawn_agent's arguments (as `spawnAgentSchema` in tools.ts). */
export const SPAWN_AGENT_PARAMETERS: JsonSchema = {
  type: "object",
  properties: {
    task_name: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" },
    message: { type: "string", minLength: 1, maxLength: 100000 },
    tools: { maxItems: 32, type: "array", items: { type: "string" } },
    provider: { type: "string", minLength: 1 },
    model: { type: "string", minLength: 1 },
    thinking_level: { type: "string", enum: ["off", "low", "medium", "high"] },
  },
  required: ["task_name", "message"],
  additionalProperties: false,
};

/** wait_agent's arguments (as `waitAgentSchema` in tools.ts). */
export const WAIT_AGENT_PARAMETERS: JsonSchema = {
  type: "object",
  properties: {
    timeout_ms: { type: "integer", exclusiveMinimum: 0, maximum: 1800000 },
  },
  additionalProperties: false,
};

/**
 * Loads the tools' code (and zod) ahead of their first call: with an idle child started, the
 * spawn then waits for nothing. Never throws.
 */
export function preloadSubagentTools(): void {
  import("./tools.ts").catch(() => {});
}

/** The two tools over `host`; each call runs tools.ts's (loaded once, at the first call). */
export function subagentTools(host: SubagentHost): Tool[] {
  let loaded: Promise<Map<string, Tool>> | undefined;
  const implementation = async (name: string): Promise<Tool> => {
    loaded ??= import("./tools.ts").then(({ subagentToolImplementations }) =>
      new Map(subagentToolImplementations(host).map((tool) => [tool.name, tool]))
    );
    return (await loaded).get(name)!;
  };
  const spec = (name: string, description: string, parameters: JsonSchema): Tool => ({
    name,
    description,
    parameters,
    // Spawning changes nothing; what the child may change is settled by the host (a person
    // approves handing write tools to a child of an ASK session) and by the child's review.
    readOnly: true,
    runsIn: "host",
    paths: () => Promise.resolve([]),
    run: async (args, ctx) => await (await implementation(name)).run(args, ctx),
  });
  return [
    spec("spawn_agent", SPAWN_AGENT_DESCRIPTION, SPAWN_AGENT_PARAMETERS),
    spec("wait_agent", WAIT_AGENT_DESCRIPTION, WAIT_AGENT_PARAMETERS),
  ];
}
