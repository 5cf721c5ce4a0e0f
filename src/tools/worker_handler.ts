/**
 * The handler module of the confined tool worker (src/sandbox/worker/): runs one built-in
 * file tool by name inside the worker, where Deno confines it to the profile's grants. Only
 * tools that declare `runsIn: "worker"` run here: shell commands go through the shell sandbox
 * (`ctx.shell`).
 */
import type { Observation } from "../core/observation.ts";
import {
  INDEX_READ,
  type ToolCallContext,
  type ToolCallRequest,
} from "../sandbox/worker/protocol.ts";
import type { Tool } from "./define.ts";
import { BUILTIN_MANIFEST } from "./mod.ts";
import { RIPGREP_ENV } from "../sandbox/worker/flags.ts";

/**
 * The tools that run here, each loaded at its first call (with the options `createBuiltinTools()`
 * gives them by default): a worker started for a `read` loads `read` alone, not every tool's
 * code, and answers its first call that much sooner.
 */
const WORKER_TOOLS: Readonly<Record<string, () => Promise<Tool>>> = {
  read: async () => (await import("./read.ts")).createReadTool(),
  write: async () => (await import("./write.ts")).createWriteTool(),
  edit: async () => (await import("./edit.ts")).createEditTool(),
  multi_edit: async () => (await import("./multi_edit.ts")).createMultiEditTool(),
  list: async () => (await import("./list.ts")).createListTool(),
  glob: async () => (await import("./glob.ts")).createGlobTool(),
  grep: async () => (await import("./grep.ts")).createGrepTool(grepOptions()),
};

/**
 * The ripgrep this worker was let start (the runtime names it in {@linkcode RIPGREP_ENV} when
 * the worker runs in bubblewrap); otherwise grep's default, `rg` from PATH when Deno lets it
 * start one, else its JavaScript engine.
 */
function grepOptions(): { ripgrep?: string } {
  try {
    const path = Deno.env.get(RIPGREP_ENV);
    return path ? { ripgrep: path } : {};
  } catch {
    return {};
  }
}

const loaded = new Map<string, Promise<Tool>>();

function workerTool(name: string): Promise<Tool> | undefined {
  if (!Object.hasOwn(WORKER_TOOLS, name)) return undefined;
  let tool = loaded.get(name);
  if (tool === undefined) {
    tool = WORKER_TOOLS[name]();
    // A load that failed is tried again at the next call.
    tool.catch(() => loaded.delete(name));
    loaded.set(name, tool);
  }
  return tool;
}

/**
 * Runs the built-in tool `request.tool` with `request.args` in `request.workspace` (and the
 * granted `request.roots`). Never throws. An unknown tool, or one not declared to run in the
 * worker, gives UNKNOWN_TOOL. A
 * permission Deno refused comes back as POLICY_DENIED in words the model can act on (see
 * {@linkcode explainDenial}).
 */
export async function handleToolCall(
  request: ToolCallRequest,
  ctx: ToolCallContext,
): Promise<Observation> {
  if (request.tool === INDEX_READ) return await indexRead(request);
  const loading = workerTool(request.tool);
  if (loading === undefined) {
    const runsIn = BUILTIN_MANIFEST.find((entry) => entry.name === request.tool)?.runsIn;
    if (runsIn === undefined) {
      const message = `Unknown tool "${request.tool}" in the tool worker`;
      return { status: "ERROR", code: "UNKNOWN_TOOL", message };
    }
    const where = runsIn === "sandbox"
      ? "it runs shell commands, which run in the shell sandbox"
      : "it runs in tern's process";
    const message = `Tool "${request.tool}" does not run in the tool worker: ${where}`;
    return { status: "ERROR", code: "UNKNOWN_TOOL", message };
  }
  let tool: Tool;
  try {
    tool = await loading;
  } catch (error) {
    const message = `Cannot load the tool "${request.tool}" in the tool worker: ${
      error instanceof Error ? error.message : String(error)
    }`;
    return { status: "ERROR", code: "EXECUTION_FAILED", message };
  }
  const observation = await tool.run(request.args, {
    workspace: request.workspace,
    roots: request.roots,
    signal: ctx.signal,
    update: ctx.update,
  });
  return explainDenial(observation);
}

/** The code index's read of one file ({@linkcode INDEX_READ}). */
async function indexRead(request: ToolCallRequest): Promise<Observation> {
  const { path, maxBytes } = request.args as { path?: unknown; maxBytes?: unknown };
  if (typeof path !== "string" || typeof maxBytes !== "number") {
    return { status: "ERROR", code: "INVALID_ARGUMENTS", message: "index_read takes a path" };
  }
  const { readWorkspaceText } = await import("../config/workspace_file.ts");
  let refused: string | undefined;
  try {
    const text = readWorkspaceText(request.workspace, path, {
      what: "file",
      warn: (why) => refused = why,
      noLinks: true,
      maxBytes,
    });
    if (refused !== undefined) return { status: "ERROR", code: "POLICY_DENIED", message: refused };
    if (text === undefined) return { status: "ERROR", code: "NOT_FOUND", message: "gone" };
    return { status: "SUCCEEDED", output: text };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { status: "ERROR", code: "EXECUTION_FAILED", message };
  }
}

/**
 * Deno's wording of a refused permission: `Requires read access to "/etc/passwd", run again
 * with the --allow-read flag` (or, in a compiled binary, `…, specify the required permissions
 * during compilation using …`).
 */
const DENO_DENIAL =
  /Requires (\w+) access to (.+?)(?:, (?:run again with|specify the required permissions)[^\n]*)?$/m;

/**
 * `observation` with Deno's permission wording replaced by what the model can do about it:
 * `The sandbox does not allow read access to "/etc/passwd": ask for it with
 * request_permissions`, as POLICY_DENIED. Deno's "run again with --allow-read" advice would
 * mislead the model. Other observations come back unchanged.
 */
export function explainDenial(observation: Observation): Observation {
  if (observation.status !== "ERROR") return observation;
  const match = DENO_DENIAL.exec(observation.message);
  if (match === null) return observation;
  const [denoText, kind, target] = match;
  const explained = deniedForGood(kind, target)
    ? `The sandbox never allows ${kind} access to ${describeTarget(target)}: it belongs to ` +
      "tern itself (its home, its code, the Deno that runs it or Deno's cache), and no request " +
      "can grant it; ask the person to make this change outside tern"
    : `The sandbox does not allow ${kind} access to ${describeTarget(target)}: ` +
      "ask for it with request_permissions";
  const before = observation.message.slice(0, match.index);
  const after = observation.message.slice(match.index + denoText.length);
  return { status: "ERROR", code: "POLICY_DENIED", message: before + explained + after };
}

/**
 * Whether this process's flags deny `kind` access to the quoted path `target` outright
 * (`--deny-write`: tern's home and its own code, src/sandbox/own_code.ts), which no grant can
 * lift.
 */
function deniedForGood(kind: string, target: string): boolean {
  if ((kind !== "write" && kind !== "read") || !target.startsWith('"')) return false;
  try {
    const path = JSON.parse(target);
    if (typeof path !== "string") return false;
    return Deno.permissions.querySync({ name: kind, path }).state === "denied";
  } catch {
    return false;
  }
}

function describeTarget(target: string): string {
  if (target === "<CWD>") return "the working directory";
  if (target === "all") return "everything";
  return target;
}
