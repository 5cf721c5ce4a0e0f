/** The `process_list` tool: the background processes started with `bash` `run_in_background`. */
import * as z from "../core/zod.ts";
import { defineTool, type Tool } from "./define.ts";
import { describeProcess } from "./process_text.ts";
import { controlOf } from "./process_logs.ts";

export const processListParameters = z.strictObject({});

/** Creates `process_list`: one line per process (running and ended), oldest first. */
export function createProcessListTool(): Tool {
  return defineTool({
    name: "process_list",
    description: "List the background processes started with bash run_in_background: id, " +
      "state (running, ready, exited, stopped), exit code, readiness and command.",
    parameters: processListParameters,
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute(_args, ctx) {
      const all = controlOf(ctx, "process_list").list();
      const output = all.length === 0
        ? "No background processes"
        : all.map((info) => describeProcess(info)).join("\n");
      return Promise.resolve({ output });
    },
  });
}
