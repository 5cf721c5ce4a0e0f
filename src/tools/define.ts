/**
 * defineTool(): the one place that validates arguments, shapes errors and caps output, so no
 * tool body repeats them. Tool bodies throw; `run()` turns every outcome into an Observation.
 */
import type * as z from "../core/zod.ts";
import { MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "../core/json_depth.ts";
import { type Observation, type ToolDetails, ToolError } from "../core/observation.ts";
import type { JsonSchema } from "../core/tool_spec.ts";
import type { ImagePart } from "../core/messages.ts";
import type { ShellRunner } from "../sandbox/types.ts";
import type { ProcessControl } from "../sandbox/background.ts";
import type { PathRoots } from "./paths.ts";
import { truncateMiddle } from "./truncate.ts";
import { conformance } from "./json_conforms.ts";

/** What a tool body gets besides its arguments. */
export interface ToolContext {
  /**
   * Absolute real path of the workspace root; every path a tool touches resolves inside it,
   * or inside one of `roots`.
   */
  workspace: string;
  /**
   * Folders besides the workspace (absolute real paths) the file tools may use, as granted by
   * request_permissions: read, list, glob and grep accept a read or a write root; write and
   * edit only a write root. Default none.
   */
  roots?: PathRoots;
  /** Fires when the call is cancelled or timed out; tools pass it to everything they wait on. */
  signal: AbortSignal;
  /** The model's id for this call, when it came from the model. */
  callId?: string;
  /** Reports progress text to the front end (a `tool_update` event). */
  update?: (text: string) => void;
  /**
   * Runs shell commands, confined by the sandbox that built it. Tools that run commands fail
   * without one: a command never runs unconfined by accident.
   */
  shell?: ShellRunner;
  /**
   * The run's background processes (see `background.ts`), their starts confined as `shell`'s
   * commands are. Without it `bash` cannot run in the background.
   */
  processes?: ProcessControl;
  /**
   * Ends the turn once this call is done (a hook's `continue: false`): the calls after it in
   * the same reply do not run, and no model call follows. `reason` is for the person.
   */
  stopTurn?: (reason: string) => void;
}

/** What a tool body returns: text for the model, and optional UI-only details. */
export interface ToolOutput {
  output: string;
  details?: ToolDetails;
  /** Images for the model after `output` (never truncated; their limits are the tool's). */
  images?: ImagePart[];
}

/**
 * Where a tool's body runs: `"worker"` in the confined tool worker (Deno flags, and bubblewrap
 * where commands get it), `"sandbox"` as a shell command in the shell sandbox (`ctx.shell`; the
 * gate classifies the call's `command` argument), `"host"` in tern's own process (MCP tools,
 * which run in their server).
 */
export type RunsIn = "worker" | "sandbox" | "host";

/** A path one call touches, as the call names it (relative to the workspace, or absolute). */
export interface ToolPath {
  path: string;
  /** The call may create, change or remove it. */
  write: boolean;
}

/**
 * The network access one call makes (the web tools): the host it contacts, and exactly what
 * a person or the reviewer is shown (`GET https://…`, a search query and its provider).
 */
export interface NetworkAccess {
  host: string;
  what: string;
}

/**
 * Parameters defined by their JSON Schema rather than by zod, for a tool that should run
 * without loading zod (`bash`, the first tool most runs call): a call whose arguments conform
 * (`json_conforms.ts`, for schemas of the shape it knows) runs at once; any other loads zod,
 * builds its schema from this one, and zod decides and words the error.
 */
export interface JsonParameters {
  jsonSchema: JsonSchema;
}

export interface ToolDefinition<S extends z.ZodType> {
  name: string;
  /** Model-facing description. */
  description: string;
  /**
   * A strict schema: missing, wrong-typed or extra fields are INVALID_ARGUMENTS. Given as
   * {@linkcode JsonParameters}, `S` only types the arguments.
   */
  parameters: S | JsonParameters;
  /** True when the tool never changes anything; read-only calls may run concurrently. */
  readOnly: boolean;
  /** Where the body runs; the gate, the worker and the audit log go by it. */
  runsIn: RunsIn;
  /**
   * The paths a call touches, from its validated arguments: plan path locks take the written
   * ones, the policy checks each against the rules, the audit log records them. A path the
   * call may change must be here with `write: true`.
   */
  paths(args: z.infer<S>): ToolPath[];
  /**
   * The network access a call makes, for tools that reach the network themselves (not through
   * a shell command): the policy allows it only under a profile with the whole network, else
   * review decides each one. Undefined when the call makes none.
   */
  network?(args: z.infer<S>): NetworkAccess | undefined;
  /** Cap on the output text in characters (default 50,000); head and tail are kept. */
  maxOutputChars?: number;
  /**
   * One line for the system prompt's "How to work" list, when the model should choose this
   * tool over another (code_search over grep); the prompt carries it only when the turn has
   * the tool.
   */
  guidance?: string;
  /** Every subagent gets this tool (spawn_agent names the others); only read-only tools. */
  subagentBase?: true;
  execute(args: z.infer<S>, ctx: ToolContext): Promise<ToolOutput>;
}

/** A tool ready for the registry. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly readOnly: boolean;
  readonly runsIn: RunsIn;
  /** See {@linkcode ToolDefinition.guidance}. */
  readonly guidance?: string;
  /** See {@linkcode ToolDefinition.subagentBase}. */
  readonly subagentBase?: true;
  /**
   * The paths a call with `args` touches (see {@linkcode ToolDefinition.paths}); none when the
   * arguments are invalid (the call then fails without running). Never throws.
   */
  paths(args: unknown): Promise<readonly ToolPath[]>;
  /**
   * The network access a call with `args` makes (see {@linkcode ToolDefinition.network});
   * absent for tools that make none. Never throws.
   */
  network?(args: unknown): Promise<NetworkAccess | undefined>;
  /** JSON Schema generated from the zod schema. */
  readonly parameters: JsonSchema;
  /** Validates and runs the call. Never throws: every outcome is an Observation. */
  run(args: unknown, ctx: ToolContext): Promise<Observation>;
}

const DEFAULT_MAX_OUTPUT_CHARS = 50_000;

export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): Tool {
  let schema: JsonSchema | undefined;
  const parse = argumentParser<z.infer<S>>(def.parameters);
  const maxChars = def.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  return {
    name: def.name,
    description: def.description,
    readOnly: def.readOnly,
    runsIn: def.runsIn,
    ...(def.guidance === undefined ? {} : { guidance: def.guidance }),
    ...(def.subagentBase ? { subagentBase: true as const } : {}),
    async paths(args) {
      if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) return [];
      const parsed = await parse(args);
      return parsed.success ? def.paths(parsed.data) : [];
    },
    ...(def.network === undefined ? {} : {
      async network(args: unknown) {
        if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) return undefined;
        const parsed = await parse(args);
        return parsed.success ? def.network!(parsed.data) : undefined;
      },
    }),
    get parameters(): JsonSchema {
      schema ??= isJson(def.parameters) ? def.parameters.jsonSchema : toJsonSchema(def.parameters);
      return schema;
    },
    async run(args, ctx) {
      // Validation walks the value recursively: a value nested deep enough would overflow it.
      if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
        return {
          status: "ERROR",
          code: "INVALID_ARGUMENTS",
          message: `Invalid arguments for "${def.name}": ` +
            `they nest more than ${MAX_ARGUMENT_DEPTH} levels deep`,
        };
      }
      const parsed = await parse(args);
      if (!parsed.success && parsed.unchecked) {
        return {
          status: "ERROR",
          code: "EXECUTION_FAILED",
          message: `Cannot check the arguments of "${def.name}": ${parsed.problem}`,
        };
      }
      if (!parsed.success) {
        return {
          status: "ERROR",
          code: "INVALID_ARGUMENTS",
          message: `Invalid arguments for "${def.name}": ${parsed.problem}`,
        };
      }
      if (ctx.signal.aborted) return cancelled(def.name);
      try {
        const result = await def.execute(parsed.data, ctx);
        const output = truncateMiddle(result.output, maxChars);
        const observation: Observation = { status: "SUCCEEDED", output, details: result.details };
        if (result.images !== undefined && result.images.length > 0) {
          observation.images = result.images;
        }
        return observation;
      } catch (error) {
        // A tool's own CANCELLED error may carry partial output (bash): keep its message.
        const ownCancel = error instanceof ToolError && error.code === "CANCELLED";
        if (ctx.signal.aborted && !ownCancel) return cancelled(def.name);
        return errorObservation(error);
      }
    },
  };
}

/**
 * Validated arguments, or what is wrong with them (for the model to read); `unchecked` when
 * the validator itself could not load.
 */
type Parsed<T> =
  | { success: true; data: T }
  | { success: false; problem: string; unchecked?: true };

/**
 * Validates arguments: through zod for a zod schema; for {@linkcode JsonParameters}, without
 * zod when they conform, else through the zod schema built from the JSON Schema (loaded then).
 * Never rejects.
 */
function argumentParser<T>(
  parameters: z.ZodType | JsonParameters,
): (args: unknown) => Promise<Parsed<T>> {
  if (!isJson(parameters)) {
    // deno-lint-ignore require-await
    return async (args) => verdict(parameters.safeParse(args));
  }
  const conforms = conformance(parameters.jsonSchema);
  let zod: Promise<z.ZodType> | undefined;
  return async (args) => {
    const checked = conforms?.(args);
    if (checked !== undefined) return { success: true, data: checked as T };
    try {
      zod ??= import("../core/zod.ts").then(({ fromJSONSchema }) =>
        fromJSONSchema(parameters.jsonSchema as Parameters<typeof fromJSONSchema>[0])
      );
      return verdict((await zod).safeParse(args));
    } catch (error) {
      zod = undefined; // a chunk that failed to load is tried again by the next call
      return { success: false, problem: messageOf(error), unchecked: true };
    }
  };
}

function verdict<T>(
  result: { success: true; data: unknown } | { success: false; error: z.ZodError },
): Parsed<T> {
  return result.success
    ? { success: true, data: result.data as T }
    : { success: false, problem: describeIssues(result.error) };
}

function isJson(parameters: z.ZodType | JsonParameters): parameters is JsonParameters {
  return !("_zod" in parameters);
}

function toJsonSchema(schema: z.ZodType): JsonSchema {
  const json = schema.toJSONSchema({ target: "draft-7", io: "input" }) as JsonSchema;
  delete json.$schema;
  return json;
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => {
    const where = issue.path.length > 0 ? `"${issue.path.join(".")}"` : "arguments";
    if (issue.code === "unrecognized_keys") {
      return `${where}: unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    }
    return `${where}: ${issue.message}`;
  }).join("; ");
}

function cancelled(name: string): Observation {
  return { status: "ERROR", code: "CANCELLED", message: `Tool "${name}" was cancelled` };
}

function errorObservation(error: unknown): Observation {
  if (error instanceof ToolError) {
    return { status: "ERROR", code: error.code, message: error.message };
  }
  if (error instanceof Deno.errors.NotFound) {
    return { status: "ERROR", code: "NOT_FOUND", message: messageOf(error) };
  }
  if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
    return { status: "ERROR", code: "POLICY_DENIED", message: messageOf(error) };
  }
  return { status: "ERROR", code: "EXECUTION_FAILED", message: messageOf(error) };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
