/**
 * spawn_agent and wait_agent: the model's way to delegate a task to a child agent (a `tern
 * child` process with a session of its own) and to collect what it found. Their code, loaded
 * at their first call by tool_specs.ts (which the session registers).
 */
import * as z from "../../core/zod.ts";
import { defineTool, type Tool } from "../../tools/define.ts";
import { ToolError } from "../../core/observation.ts";
import { BUILTIN_MANIFEST } from "../../tools/mod.ts";
import { completionText } from "./mailbox.ts";
import type { SubagentHost } from "./host.ts";
import { CHILD_BASE_TOOLS, SPAWN_AGENT_DESCRIPTION, WAIT_AGENT_DESCRIPTION } from "./constants.ts";

/** Tools a child may be given besides the base ones: the built-ins, by canonical name. */
export const CHILD_TOOL_NAMES: readonly string[] = [
  ...BUILTIN_MANIFEST.map((entry) => entry.name),
  "request_permissions",
];

/** wait_agent's default and longest wait, in milliseconds. */
const DEFAULT_WAIT_MS = 60_000;
const MAX_WAIT_MS = 30 * 60_000;

export const spawnAgentSchema = z.object({
  task_name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, {
    message: "a short name of letters, digits, '_', '.' and '-'",
  }),
  message: z.string().min(1).max(100_000),
  tools: z.array(z.string()).max(32).optional(),
  provider: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  thinking_level: z.enum(["off", "low", "medium", "high"]).optional(),
}).strict();

export const waitAgentSchema = z.object({
  timeout_ms: z.number().int().positive().max(MAX_WAIT_MS).optional(),
}).strict();

/** The two tools, working through `host`. */
export function subagentToolImplementations(host: SubagentHost): Tool[] {
  return [spawnAgentTool(host), waitAgentTool(host)];
}

function spawnAgentTool(host: SubagentHost): Tool {
  return defineTool({
    name: "spawn_agent",
    description: SPAWN_AGENT_DESCRIPTION,
    parameters: spawnAgentSchema,
    // Spawning changes nothing; what the child may change is settled by the host (a person
    // approves handing write tools to a child of an ASK session) and by the child's review.
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    async execute(args, ctx) {
      const tools = checkToolNames(args.tools ?? []);
      let spawn;
      try {
        spawn = await host.spawn({
          signal: ctx.signal,
          taskName: args.task_name,
          message: args.message,
          tools,
          ...(args.provider === undefined ? {} : { provider: args.provider }),
          ...(args.model === undefined ? {} : { model: args.model }),
          ...(args.thinking_level === undefined ? {} : { thinking: args.thinking_level }),
        });
      } catch (error) {
        throw new ToolError(
          "EXECUTION_FAILED",
          error instanceof Error ? error.message : `${error}`,
        );
      }
      return {
        output: `Started subagent "${spawn.taskName}" (agent ${spawn.agentId}, run ` +
          `${spawn.runId}, child session ${spawn.childSessionId}) with tools ` +
          `${spawn.tools.join(", ")} on ${spawn.model}. Call wait_agent for its result.`,
      };
    },
  });
}

function waitAgentTool(host: SubagentHost): Tool {
  return defineTool({
    name: "wait_agent",
    description: WAIT_AGENT_DESCRIPTION,
    parameters: waitAgentSchema,
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    async execute(args, ctx) {
      const timeoutMs = args.timeout_ms ?? DEFAULT_WAIT_MS;
      const result = await host.wait(timeoutMs, ctx.signal, ctx.callId);
      switch (result.kind) {
        case "completion":
          return { output: completionText(result.completion) };
        case "idle":
          return { output: "No subagent is running and none has a result waiting." };
        case "woken":
          return {
            output: "The wait ended early: the person sent a message (it follows). " +
              "Subagents still run; call wait_agent again for their results.",
          };
        case "timeout":
          return {
            output: `No subagent finished within ${timeoutMs} ms; still running: ` +
              result.running.map((run) => `${run.taskName} (${run.runId})`).join(", ") +
              ". They go on; call wait_agent again later.",
          };
      }
    },
  });
}

/**
 * `names` validated: canonical built-in names only, each once, the base tools dropped.
 * @throws {ToolError} naming the unknown ones and the choices.
 */
export function checkToolNames(names: readonly string[]): string[] {
  const unknown = names.filter((name) => !CHILD_TOOL_NAMES.includes(name));
  if (unknown.length > 0) {
    throw new ToolError(
      "INVALID_ARGUMENTS",
      `Cannot give a subagent ${unknown.map((name) => `"${name}"`).join(", ")}: not a ` +
        `tool name; choose from ${CHILD_TOOL_NAMES.join(", ")}`,
    );
  }
  return [...new Set(names)].filter((name) => !CHILD_BASE_TOOLS.includes(name));
}
