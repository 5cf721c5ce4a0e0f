/** `bash` with `run_in_background`: starts a background process and waits for it to be ready. */
import { ToolError } from "../core/observation.ts";
import type { ProcessInfo, WaitOutcome } from "../sandbox/background.ts";
import type { ToolContext, ToolOutput } from "./define.ts";
import { describeProcess, logText } from "./process_text.ts";

/** How long a start waits for readiness when `timeout_ms` is not given, in milliseconds. */
export const DEFAULT_READY_TIMEOUT_MS = 30_000;
/** Log lines shown with the result of a start, and their characters at most. */
const SHOWN_LINES = 20;
const SHOWN_CHARS = 4000;

/** The arguments a background start reads. */
export interface BackgroundArgs {
  command: string;
  timeout_ms?: number;
  ready_port?: number;
  ready_text?: string;
}

/**
 * Starts `args.command` through `ctx.processes` (confined as the call's shell commands are) in
 * the workspace. With `ready_port` or `ready_text`, waits until the process is ready, has ended,
 * or `timeout_ms` passed (it keeps running then). Without either, returns at once. A call
 * cancelled before it returns (during the launch or the wait) stops the process.
 */
export async function startInBackground(
  args: BackgroundArgs,
  ctx: ToolContext,
): Promise<ToolOutput> {
  const processes = ctx.processes;
  if (processes === undefined) {
    throw new ToolError(
      "EXECUTION_FAILED",
      'Cannot run "bash" in the background: background processes are not available here',
    );
  }
  let started: ProcessInfo;
  try {
    started = await processes.start(args.command, {
      cwd: ctx.workspace,
      ...(args.ready_port !== undefined ? { port: args.ready_port } : {}),
      ...(args.ready_text !== undefined ? { text: args.ready_text } : {}),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ToolError("EXECUTION_FAILED", `Cannot run "bash" in the background: ${message}`);
  }
  const waits = args.ready_port !== undefined || args.ready_text !== undefined;
  // A cancel that came while it launched stops it too, with or without a wait.
  const outcome: WaitOutcome | undefined = waits
    ? await processes.wait(started.id, {
      timeoutMs: args.timeout_ms ?? DEFAULT_READY_TIMEOUT_MS,
      signal: ctx.signal,
    })
    : ctx.signal?.aborted
    ? "cancelled"
    : undefined;
  if (outcome === "cancelled") {
    await processes.stop(started.id);
    throw new ToolError(
      "CANCELLED",
      `Background process ${started.id} was cancelled and stopped`,
    );
  }
  const info = processes.info(started.id);
  const { lines } = processes.logs(started.id, { tail: SHOWN_LINES });
  const head = outcome === "timeout"
    ? `Started ${info.id}; not ready after ${
      args.timeout_ms ?? DEFAULT_READY_TIMEOUT_MS
    } ms (it keeps running)`
    : info.state === "stopped" && outcome !== "ready"
    // By the person (`/procs stop`) or a parallel call: not a crash to start again.
    ? `Started ${info.id}; it was stopped before it was ready`
    : outcome === "exited" || info.state === "exited"
    ? `Started ${info.id}; it ended before it was ready`
    : outcome === "ready"
    ? `Started ${info.id}; it is ready`
    : `Started ${info.id}`;
  const log = lines.length === 0 ? "(no output yet)" : logText(lines, SHOWN_CHARS);
  return {
    output: `${head}\n${describeProcess(info)}\nlast output:\n${log}`,
    // Ended by itself before the call returned: its exit code, as a command's, so the call's
    // line and the audit record show a start that failed (`exit 127`), not a success.
    ...(info.state === "exited"
      ? {
        details: {
          kind: "command" as const,
          exitCode: info.exitCode,
          timedOut: false,
          truncated: false,
        },
      }
      : {}),
  };
}
