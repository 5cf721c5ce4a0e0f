/**
 * An MCP server's tool as the agent sees it: the same shape as a built-in tool (name,
 * description, JSON Schema, `readOnly`, `run` that never throws), so the registry, the
 * permission gate and the audit treat both alike. Arguments are validated against the
 * server's input schema before anything is sent; only tools annotated `readOnlyHint` count
 * as read-only.
 *
 * What it declares about itself (see `src/tools/define.ts`): it runs on the host (in its
 * server, which tern does not confine), it only reads when the server says so (`readOnlyHint`:
 * a hint from the server, but the only word there is, and one that can only loosen review for
 * tools the server owner marked), and a top-level string `path` argument is the one path tern
 * can name for it (written unless read-only): a guess, kept so path rules (a deny rule on
 * `secret/**` for every tool) and plan path locks cover MCP tools too.
 */
import type { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { Observation } from "../core/observation.ts";
import type { JsonSchema } from "../core/tool_spec.ts";
import { McpCallError, type McpConnection, type McpToolInfo } from "./connection.ts";
import { resultObservation } from "./results.ts";

/** The longest description passed to the model; servers sometimes send manuals. */
const MAX_DESCRIPTION = 4000;

/**
 * The most bytes of JSON a tool's input schema may take as the model gets it (about 16,000
 * tokens); a tool over it is not offered. Real schemas take a few KB at most (the reference
 * servers' largest under 1 KB), while every request carries the schemas of the tools offered
 * and loaded: one tool over this would cost more than a tenth of a 128K-token window on every
 * request, however few tools a server has.
 */
export const MAX_SCHEMA_BYTES = 64 * 1024;

/** A server's tool, ready for the tool registry. */
export interface McpTool {
  readonly name: string;
  readonly description: string;
  readonly readOnly: boolean;
  /** MCP tools run in their server, outside tern's sandbox. */
  readonly runsIn: "host";
  /** The call's top-level string `path` argument, if any (see the module comment). */
  paths(args: unknown): Promise<readonly { path: string; write: boolean }[]>;
  readonly parameters: JsonSchema;
  /** The server's name and the tool's own name there. */
  readonly server: string;
  readonly tool: string;
  /** Validates and calls. Never throws: every outcome is an Observation. */
  run(args: unknown, ctx: { signal: AbortSignal }): Promise<Observation>;
}

let validators: AjvJsonSchemaValidator | undefined;

/** Adapts tool `info` of `connection`, exposed to the model as `name`. */
export function mcpTool(
  connection: Pick<McpConnection, "name" | "callTool">,
  info: McpToolInfo,
  name: string,
): McpTool {
  const parameters = modelSchema(info.inputSchema);
  let validate: Promise<(args: unknown) => string | undefined> | undefined;
  const readOnly = info.annotations?.readOnlyHint === true;
  return {
    name,
    description: describe(connection.name, info),
    readOnly,
    runsIn: "host",
    // deno-lint-ignore require-await
    async paths(args) {
      const path = typeof args === "object" && args !== null
        ? (args as Record<string, unknown>).path
        : undefined;
      return typeof path === "string" && path !== "" ? [{ path, write: !readOnly }] : [];
    },
    parameters,
    server: connection.name,
    tool: info.name,
    async run(args, ctx) {
      const input = args ?? {};
      validate ??= compile(parameters);
      const problem = (await validate)(input);
      if (problem !== undefined) {
        return {
          status: "ERROR",
          code: "INVALID_ARGUMENTS",
          message: `Invalid arguments for "${name}": ${problem}`,
        };
      }
      if (ctx.signal.aborted) return cancelled(name);
      try {
        return resultObservation(name, await connection.callTool(info.name, input, ctx.signal));
      } catch (error) {
        return callFailure(name, error);
      }
    },
  };
}

/**
 * Why `info` of `server` is not offered to the model (its schema is over
 * {@linkcode MAX_SCHEMA_BYTES}), as a warning naming both and the size; undefined when it is.
 */
export function schemaProblem(server: string, info: McpToolInfo): string | undefined {
  const bytes = new TextEncoder().encode(JSON.stringify(modelSchema(info.inputSchema))).length;
  if (bytes <= MAX_SCHEMA_BYTES) return undefined;
  const name = info.name.replace(/[^\p{L}\p{N}\p{P}\p{S} ]/gu, "?").slice(0, 100);
  return `MCP server "${server}": tool "${name}" is not offered to the model: its input schema ` +
    `takes ${kilobytes(bytes)} of JSON, over the limit of ${kilobytes(MAX_SCHEMA_BYTES)}`;
}

function kilobytes(bytes: number): string {
  return `${Math.ceil(bytes / 1024).toLocaleString("en-US")} KB`;
}

function describe(server: string, info: McpToolInfo): string {
  const text = info.description?.trim() || info.title || info.annotations?.title ||
    `Tool "${info.name}"`;
  const cut = text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…` : text;
  return `${cut}\n(MCP server "${server}")`;
}

/** The input schema as model APIs take it: an object schema without `$schema`. */
function modelSchema(input: Record<string, unknown>): JsonSchema {
  const { $schema: _ignored, ...schema } = input ?? {};
  if (schema.type === undefined) schema.type = "object";
  if (schema.type === "object" && schema.properties === undefined) schema.properties = {};
  return schema;
}

/**
 * A validator for `schema`; a schema Ajv cannot compile is left to the server to check. Ajv
 * loads on the first call of any MCP tool, not when the servers start.
 */
async function compile(schema: JsonSchema): Promise<(args: unknown) => string | undefined> {
  if (validators === undefined) {
    const { AjvJsonSchemaValidator } = await import("@modelcontextprotocol/sdk/validation/ajv");
    validators = new AjvJsonSchemaValidator();
  }
  try {
    const check = validators.getValidator(schema);
    return (args) => {
      const result = check(args);
      return result.valid ? undefined : result.errorMessage ?? "does not match the input schema";
    };
  } catch {
    return () => undefined;
  }
}

function callFailure(name: string, error: unknown): Observation {
  if (error instanceof McpCallError) {
    const code = error.kind === "timeout"
      ? "TIMEOUT"
      : error.kind === "cancelled"
      ? "CANCELLED"
      : "EXECUTION_FAILED";
    return { status: "ERROR", code, message: error.message };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return { status: "ERROR", code: "EXECUTION_FAILED", message: `"${name}" failed: ${detail}` };
}

function cancelled(name: string): Observation {
  return { status: "ERROR", code: "CANCELLED", message: `Tool "${name}" was cancelled` };
}
