/** The `bash` tool: runs a shell command in the workspace through the sandbox's shell runner. */
import type * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { truncateMiddle } from "./truncate.ts";
import { startInBackground } from "./bash_background.ts";
import { type BashArgs, bashDefaultTimeout, bashDescription, bashParameters } from "./bash_spec.ts";

/** Output shown to the model at most, in characters; the head and the tail are kept. */
export const MAX_BASH_OUTPUT_CHARS = 400_000;

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
  const defaultMs = bashDefaultTimeout(options.defaultTimeoutMs);
  return defineTool<z.ZodType<BashArgs>>({
    name: "bash",
    description: bashDescription(defaultMs),
    // Its JSON Schema, not zod: a well-formed call runs without loading zod (define.ts).
    parameters: { jsonSchema: bashParameters(defaultMs) },
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
