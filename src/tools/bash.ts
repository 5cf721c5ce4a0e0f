/** The `bash` tool: runs a shell command in the workspace through the sandbox's shell runner. */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { truncateMiddle } from "./truncate.ts";
import { startInBackground } from "./bash_background.ts";

/** Timeout when `timeout_ms` is not given, in milliseconds. */
export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
/** Largest `timeout_ms` accepted, in milliseconds. */
export const MAX_BASH_TIMEOUT_MS = 600_000;
/** Output shown to the model at most, in characters; the head and the tail are kept. */
export const MAX_BASH_OUTPUT_CHARS = 400_000;

/** The parameters schema, with `defaultMs` as the stated default timeout. */
function bashSchema(defaultMs: number) {
  return z.strictObject({
    command: z.string().min(1).describe('The command, run with "bash -c" in the workspace root'),
    timeout_ms: z.number().int().min(1).max(MAX_BASH_TIMEOUT_MS).optional().describe(
      `Stop the command after this many milliseconds; default ${defaultMs}`,
    ),
    description: z.string().optional().describe(
      "A few words on what the command does, shown to the user",
    ),
    run_in_background: z.boolean().optional().describe(
      "Start the command as a background process (a dev server, a watcher, a long build) and " +
        "return its id; see process_list, process_logs and process_stop",
    ),
    ready_port: z.number().int().min(1).max(65535).optional().describe(
      "With run_in_background: the process is ready once 127.0.0.1:<port> accepts connections",
    ),
    ready_text: z.string().min(1).max(1000).optional().describe(
      "With run_in_background: the process is ready once its output contains this text",
    ),
  });
}

export const bashParameters = bashSchema(DEFAULT_BASH_TIMEOUT_MS);

export type BashArgs = z.infer<typeof bashParameters>;

function description(defaultMs: number): string {
  return `Run a bash command in the workspace root and return its output (stdout and stderr together)
followed by "exit code: N". A non-zero exit code is reported, not treated as a tool error.
stdin is closed, so interactive commands fail; secrets are not in the environment.
Timeout ${defaultMs / 1000} s by default (max ${
    MAX_BASH_TIMEOUT_MS / 1000
  } s); on timeout everything the command started is killed.
Background processes are stopped when the command ends. Long output is shown as its beginning and end plus the path of a file holding all of it.
Prefer read, grep, glob and edit for files.
With run_in_background the command keeps running in a sandbox of its own until process_stop or
the end of the session; declare ready_port or ready_text to wait (timeout_ms, default 30 s) until
it is ready. Under a sandbox without the host network it listens on its own loopback: later
commands cannot connect to it (they have theirs); use ready_port and process_logs instead.`;
}

/** Options for {@linkcode createBashTool}. */
export interface BashToolOptions {
  /** Timeout when a call gives none, in milliseconds (capped at the maximum); default 120,000. */
  defaultTimeoutMs?: number;
}

/**
 * Creates the `bash` tool. A non-zero exit code is a SUCCEEDED observation whose output ends
 * with `exit code: N`: the model reads the code. Timeout and cancel are TIMEOUT and CANCELLED
 * errors whose message carries the partial output. Commands run through `ctx.shell` (bubblewrap,
 * or a plain process group only when the sandbox is turned off); without it the call fails with
 * EXECUTION_FAILED, so a command never runs unconfined by accident.
 */
export function createBashTool(options: BashToolOptions = {}): Tool {
  const defaultMs = Math.min(
    options.defaultTimeoutMs ?? DEFAULT_BASH_TIMEOUT_MS,
    MAX_BASH_TIMEOUT_MS,
  );
  return defineTool({
    name: "bash",
    description: description(defaultMs),
    parameters: defaultMs === DEFAULT_BASH_TIMEOUT_MS ? bashParameters : bashSchema(defaultMs),
    readOnly: false,
    runsIn: "sandbox",
    paths: () => [],
    maxOutputChars: MAX_BASH_OUTPUT_CHARS + 1_000,
    async execute(args, ctx) {
      if (args.run_in_background) return await startInBackground(args, ctx);
      if (args.ready_port !== undefined || args.ready_text !== undefined) {
        throw new ToolError(
          "INVALID_ARGUMENTS",
          'Cannot run "bash": ready_port and ready_text need run_in_background',
        );
      }
      const timeoutMs = args.timeout_ms ?? defaultMs;
      if (ctx.shell === undefined) {
        throw new ToolError(
          "EXECUTION_FAILED",
          'Cannot run "bash": no shell sandbox was provided',
        );
      }
      const result = await ctx.shell(args.command, {
        cwd: ctx.workspace,
        timeoutMs,
        signal: ctx.signal,
        onOutput: ctx.update,
      }).catch((error) => {
        throw new ToolError("EXECUTION_FAILED", `Cannot run "bash": ${messageOf(error)}`);
      });
      const shown = truncateMiddle(result.output, MAX_BASH_OUTPUT_CHARS);
      let body = shown.length === 0 ? "(no output)" : shown.replace(/\n$/, "");
      if (result.totalChars > result.output.length) {
        body += `\n(the command printed ${result.totalChars} characters in total)`;
      }
      if (result.timedOut) {
        throw new ToolError(
          "TIMEOUT",
          `Command timed out after ${timeoutMs} ms and was killed; output so far:\n${body}`,
        );
      }
      if (result.cancelled) {
        throw new ToolError(
          "CANCELLED",
          `Command was cancelled and killed; output so far:\n${body}`,
        );
      }
      const ending = result.signal === null
        ? `exit code: ${result.code}`
        : `exit code: ${result.code} (killed by ${result.signal})`;
      return {
        output: `${body}\n${ending}`,
        details: {
          kind: "command",
          exitCode: result.code,
          timedOut: false,
          truncated: shown.length < result.totalChars,
        },
      };
    },
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
