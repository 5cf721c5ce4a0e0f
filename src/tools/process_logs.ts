/** The `process_logs` tool: the latest output of a background process, or the lines matching. */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import type { ProcessControl } from "../sandbox/background.ts";
import { defineTool, type Tool, type ToolContext } from "./define.ts";
import { describeProcess, logText } from "./process_text.ts";

/** Lines returned when `lines` is not given. */
const DEFAULT_LINES = 50;
/** Lines returned at most. */
const MAX_LINES = 1000;
/**
 * Characters of log shown at most: with the process's line and the note, under `defineTool`'s
 * cap, so that cap never cuts the result again (its cut would not keep it well-formed).
 */
const SHOWN_CHARS = 45_000;

export const processLogsParameters = z.strictObject({
  id: z.string().min(1).describe("The process id (p1, p2, …) from bash or process_list"),
  lines: z.number().int().min(1).max(MAX_LINES).optional().describe(
    `How many of the last lines to return; default ${DEFAULT_LINES}`,
  ),
  grep: z.string().min(1).max(1000).optional().describe(
    "Only lines containing this text (plain text, case-insensitive)",
  ),
});

/** `ctx.processes`, or the error a tool without it reports. */
export function controlOf(ctx: ToolContext, tool: string): ProcessControl {
  if (ctx.processes === undefined) {
    throw new ToolError(
      "EXECUTION_FAILED",
      `Cannot run "${tool}": background processes are not available here`,
    );
  }
  return ctx.processes;
}

/** Creates `process_logs`: the kept output (the newest 200,000 characters) as a tail or a grep. */
export function createProcessLogsTool(): Tool {
  return defineTool({
    name: "process_logs",
    description: "Show the latest output (stdout and stderr) of a background process, or with " +
      "grep only the lines containing a text. Each process keeps its newest 200,000 characters.",
    parameters: processLogsParameters,
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute(args, ctx) {
      const control = controlOf(ctx, "process_logs");
      let info;
      try {
        info = control.info(args.id);
      } catch (error) {
        throw new ToolError("NOT_FOUND", error instanceof Error ? error.message : String(error));
      }
      const { lines, dropped } = control.logs(args.id, {
        tail: args.lines ?? DEFAULT_LINES,
        ...(args.grep === undefined ? {} : { grep: args.grep }),
      });
      const body = lines.length === 0
        ? args.grep === undefined ? "(no output)" : "(no line matches)"
        : logText(lines, SHOWN_CHARS);
      const note = dropped > 0 ? `\n(${dropped} older characters were dropped)` : "";
      return Promise.resolve({ output: `${describeProcess(info)}\n${body}${note}` });
    },
  });
}
