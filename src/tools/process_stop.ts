/** The `process_stop` tool: ends a background process and everything it started. */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { controlOf } from "./process_logs.ts";
import { describeProcess } from "./process_text.ts";

export const processStopParameters = z.strictObject({
  id: z.string().min(1).describe("The process id (p1, p2, …) from bash or process_list"),
});

/**
 * Creates `process_stop`. Read-only as the gate counts it: it changes no file, and ends only a
 * process the model started (its sandbox, with everything inside).
 */
export function createProcessStopTool(): Tool {
  return defineTool({
    name: "process_stop",
    description: "Stop a background process started with bash run_in_background, with " +
      "everything it started.",
    parameters: processStopParameters,
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    async execute(args, ctx) {
      const control = controlOf(ctx, "process_stop");
      let before;
      try {
        before = control.info(args.id);
      } catch (error) {
        throw new ToolError("NOT_FOUND", error instanceof Error ? error.message : String(error));
      }
      const info = await control.stop(args.id);
      // One that ended by itself (or was stopped before) is not said to be stopped by this call.
      const ended = before.state === "exited" || before.state === "stopped";
      return {
        output: `${ended ? "Already ended, nothing to stop" : "Stopped"}: ${describeProcess(info)}`,
      };
    },
  });
}
