/**
 * The built-in tools as the agent sees them before any of their code is loaded.
 *
 * The first model request needs only each tool's name, description and JSON Schema, so those
 * come from `builtin_manifest.json` (generated from the zod definitions; a test keeps the two
 * equal). The implementations — zod, tinyglobby, ignore, diff — load on the first call, or
 * earlier through `preloadBuiltinTools()` while the first request is in flight.
 */
import type { JsonSchema } from "../core/tool_spec.ts";
import { rememberSpecTokens } from "../core/spec_tokens.ts";
import type { RunsIn, Tool } from "./define.ts";
import manifest from "./builtin_manifest.json" with { type: "json" };
import type { BuiltinToolOptions } from "./builtin.ts";
import {
  bashDefaultTimeout,
  bashDescription,
  bashParameters,
  DEFAULT_BASH_TIMEOUT_MS,
} from "./bash_spec.ts";

export type { BuiltinToolOptions } from "./builtin.ts";
export type { NetworkAccess, RunsIn, Tool, ToolContext, ToolPath } from "./define.ts";

/**
 * One built-in tool as the model sees it, with what the gate must know before its code loads
 * (`readOnly`, `runsIn`; the paths of a call come from the implementation).
 */
export interface ManifestEntry {
  name: string;
  readOnly: boolean;
  runsIn: RunsIn;
  /** The tool reaches the network itself (the web tools): its calls declare `network()`. */
  network?: boolean;
  description: string;
  parameters: JsonSchema;
  /** The tool's line for the system prompt, if it has one. */
  guidance?: string;
  /** Every subagent gets it (see `ToolDefinition.subagentBase`). */
  subagentBase?: true;
  /** The estimated tokens of the spec as a request sends it (name, description, parameters). */
  tokens: number;
}

/** The manifest, in the order the model sees the tools. */
export const BUILTIN_MANIFEST: readonly ManifestEntry[] = manifest as ManifestEntry[];
for (const entry of BUILTIN_MANIFEST) rememberSpecTokens(entry, entry.tokens);

/**
 * Loads the implementations once per options object; later calls share the promise. With a
 * `name`, the map holds at least that tool, and may hold only it.
 */
export type BuiltinLoader = (name?: string) => Promise<Map<string, Tool>>;

/** What a loader is asked for to load only the built-ins that run in tern's own process. */
export const IN_PROCESS_TOOLS = "(in-process)";

/** The one built-in a loader loads alone when it is asked for it first. */
export const BASH_TOOL = "bash";

/**
 * A loader for the built-in implementations, configured with `options`. The built-ins that
 * run in tern's own process (the manifest's `runsIn` other than `"worker"`; the file tools run
 * in the tool worker) load alone, when one of them or {@linkcode IN_PROCESS_TOOLS} is asked
 * for first, so a run that only uses them never loads the file tools' libraries (about half
 * the tools' memory). `bash` asked for first loads by itself, without the other tools.
 */
export function builtinLoader(options: BuiltinToolOptions = {}): BuiltinLoader {
  let loading: Promise<Map<string, Tool>> | undefined;
  let inProcess: Promise<Map<string, Tool>> | undefined;
  let bash: Promise<Map<string, Tool>> | undefined;
  const runsHere = (name: string | undefined) =>
    name === IN_PROCESS_TOOLS ||
    BUILTIN_MANIFEST.some((entry) => entry.name === name && entry.runsIn !== "worker");
  return (name) => {
    if (name === BASH_TOOL && (bash !== undefined || (loading ?? inProcess) === undefined)) {
      // The most called tool loads alone when asked for first: a first `bash` call does not
      // wait for the code and schemas of the other tools.
      bash ??= import("./bash.ts").then(({ createBashTool }) =>
        new Map([[BASH_TOOL, createBashTool({ defaultTimeoutMs: options.bashTimeoutMs })]])
      );
      return bash;
    }
    if (loading === undefined && runsHere(name)) {
      inProcess ??= import("./builtin_in_process.ts").then(({ createInProcessTools }) =>
        new Map(createInProcessTools(options).map((tool) => [tool.name, tool]))
      );
      return inProcess;
    }
    loading ??= import("./builtin.ts").then(({ createBuiltinTools }) =>
      new Map(createBuiltinTools(options).map((tool) => [tool.name, tool]))
    );
    return loading;
  };
}

/** What {@linkcode builtinTools} tells the model beyond the manifest. */
export interface BuiltinSpecOptions {
  /** The default timeout of a `bash` call `load` was configured with; default 120,000 ms. */
  bashTimeoutMs?: number;
}

/**
 * The built-in tools, lazily implemented: `run()` loads the implementations on first use.
 * Pass the same `load` to `preload` it in the background. `bash` states the default timeout
 * of `options` (the manifest's states 120 s).
 */
export function builtinTools(
  load: BuiltinLoader = builtinLoader(),
  options: BuiltinSpecOptions = {},
): Tool[] {
  const bashMs = bashDefaultTimeout(options.bashTimeoutMs);
  return BUILTIN_MANIFEST.map((entry) =>
    lazyTool(
      // The manifest's bash states the default timeout (and its estimate is known ahead).
      entry.name === BASH_TOOL && bashMs !== DEFAULT_BASH_TIMEOUT_MS
        ? { ...entry, description: bashDescription(bashMs), parameters: bashParameters(bashMs) }
        : entry,
      load,
    )
  );
}

function lazyTool(entry: ManifestEntry, load: BuiltinLoader): Tool {
  return {
    name: entry.name,
    description: entry.description,
    readOnly: entry.readOnly,
    runsIn: entry.runsIn,
    parameters: entry.parameters,
    ...(entry.guidance === undefined ? {} : { guidance: entry.guidance }),
    ...(entry.subagentBase ? { subagentBase: true as const } : {}),
    /** Loads the implementation (as the call itself is about to); none when it cannot load. */
    async paths(args) {
      try {
        return await (await load(entry.name)).get(entry.name)?.paths(args) ?? [];
      } catch {
        return [];
      }
    },
    ...(entry.network
      ? {
        /** Loads the implementation; a call whose access cannot be known is still reviewed. */
        async network(args: unknown) {
          const fallback = { host: "(unknown)", what: `${entry.name} ${JSON.stringify(args)}` };
          try {
            const tool = (await load(entry.name)).get(entry.name);
            return tool?.network ? await tool.network(args) : fallback;
          } catch {
            return fallback;
          }
        },
      }
      : {}),
    async run(args, ctx) {
      let tool: Tool | undefined;
      try {
        tool = (await load(entry.name)).get(entry.name);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        return {
          status: "ERROR",
          code: "EXECUTION_FAILED",
          message: `Cannot load "${entry.name}": ${detail}`,
        };
      }
      if (!tool) {
        return {
          status: "ERROR",
          code: "EXECUTION_FAILED",
          message: `Tool "${entry.name}" has no implementation`,
        };
      }
      return await tool.run(args, ctx);
    },
  };
}
