/**
 * The `request_permissions` tool: the model asks for more than the profile gives (paths, hosts,
 * commands, environment variables, or running commands without the sandbox) for this turn or
 * the session, with a reason. The request goes through review like any call; a grant widens
 * the sandbox (the worker restarts with the new flags), a refusal is a clear observation.
 * Nothing widens silently.
 *
 * The spec is static so the first model request needs no zod; the implementation (with its
 * zod schema) loads on the first call.
 */
import type { JsonSchema } from "../core/tool_spec.ts";
import type { Tool } from "../tools/define.ts";
import type { PermissionGate } from "./permission_gate.ts";

const list = (what: string): JsonSchema => ({
  type: "array",
  items: { type: "string", minLength: 1 },
  description: what,
});

/** The JSON Schema the model sees; `request_permissions_impl.ts` validates with zod. */
export const REQUEST_PERMISSIONS_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    reason: { type: "string", minLength: 1, description: "Why the task needs this" },
    scope: {
      type: "string",
      enum: ["turn", "session"],
      description: "How long the grant lasts: this turn (default) or the whole session",
    },
    read: list("Paths to read outside what the sandbox allows"),
    write: list("Paths to write outside what the sandbox allows"),
    hosts: list('Network hosts to reach, as "host" or "host:port"'),
    env: list("Environment variable names tool code may read"),
    commands: list(
      'Shell command prefixes to run without asking again, e.g. "npm test", "git commit"',
    ),
    without_sandbox: {
      type: "boolean",
      description: "Run the given commands outside the sandbox; always needs a person",
    },
  },
  required: ["reason"],
  additionalProperties: false,
};

const DESCRIPTION =
  `Ask for permissions the sandbox does not give: extra paths to read or write, network
hosts, environment variables, shell command prefixes to run without asking each time, or (rarely)
running commands outside the sandbox. The user or a reviewer decides; the answer says what was
granted. Use it after a call failed with ERROR[POLICY_DENIED], with a specific reason. Never
retry a denied action another way.`;

/** The tool as the model sees it. */
export const REQUEST_PERMISSIONS_SPEC = {
  name: "request_permissions",
  description: DESCRIPTION,
  readOnly: false,
  runsIn: "host",
  parameters: REQUEST_PERMISSIONS_SCHEMA,
  /** Its read and write lists are what it asks for, not paths it touches. */
  paths: (): Promise<readonly { path: string; write: boolean }[]> => Promise.resolve([]),
} as const;

/**
 * The tool, bound to `gate`. It runs outside the gate's `wrap` (its review is the grant's), but
 * the person's PreToolUse and PostToolUse hooks see its calls as the gate's: a block refuses
 * the call, an ask leaves the grant to a person alone, a rewritten input is validated again.
 */
export function createRequestPermissionsTool(gate: PermissionGate): Tool {
  let impl: Promise<Tool> | undefined;
  const name = REQUEST_PERMISSIONS_SPEC.name;
  return {
    ...REQUEST_PERMISSIONS_SPEC,
    async run(args, ctx) {
      const pre = await gate.preToolUse(name, args, ctx);
      if (pre?.updatedInput !== undefined) args = pre.updatedInput;
      if (pre?.block !== undefined) {
        const refused = gate.refusedByHook(name, args, pre.block, ctx);
        return await gate.postToolUse(name, args, refused, ctx, { pre, ran: false });
      }
      const hookAsks = pre?.ask;
      const tool = hookAsks === undefined
        ? await (impl ??= import("./request_permissions_impl.ts").then((m) => m.createImpl(gate)))
        : (await import("./request_permissions_impl.ts")).createImpl({
          requestGrant: (request, options) => gate.requestGrant(request, { ...options, hookAsks }),
        });
      const observation = await tool.run(args, ctx);
      return await gate.postToolUse(name, args, observation, ctx, { pre, ran: true });
    },
  };
}
