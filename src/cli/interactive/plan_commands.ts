/**
 * /plan: plan-and-execute inside the session. `/plan <task>` plans the task as a graph and runs
 * it (each node's change is a line; Esc or Ctrl-C stops it, and `/plan resume` continues it
 * later without rerunning what succeeded).
 */
import { planLine, planLines, planSummary } from "../plan_view.ts";
import type { SlashCommand } from "./commands.ts";
import { hostFileLines } from "../../sandbox/persistence.ts";
import { warningLine } from "../../core/warnings.ts";

export function planCommands(): SlashCommand[] {
  return [{
    name: "plan",
    description: "plan a task as a graph of steps and run them; /plan resume continues one",
    usage: "<task> | resume",
    run: async (context, args, signal) => {
      if (args === "") throw new Error("Say what to plan: /plan <task> (or /plan resume)");
      const [conversation, { runPlan }] = await Promise.all([
        context.conversation(),
        import("../../harness/plan_run.ts"),
      ]);
      const style = context.theme;
      const resume = args === "resume";
      const result = await runPlan({
        conversation,
        task: resume ? undefined : args,
        resume,
        concurrency: context.config.planConcurrency,
        signal,
        onPlanned: (state, attempts) => {
          const retried = attempts > 1 ? " (after one corrective retry)" : "";
          context.notice(`plan ${state.id}: ${state.nodes.length} steps${retried}`);
          context.print(planLines(state, style).map((line) => `  ${line}`));
        },
        onUpdate: (state, nodeId) => {
          const line = planLine(state, nodeId, style);
          if (line) context.print([`  ${line}`]);
        },
        // A note may quote the model's words (a rejected replan's keys): on one row, blanks shown.
        onNote: (note) => context.notice(warningLine(note), "warning"),
        // As a turn's end shows them: the person should check these before they run.
        onHostFiles: (_nodeId, hostFiles) =>
          context.print(hostFileLines(hostFiles).map((line) => style.yellow(line))),
      });
      context.print(planSummary(result.state, style, result.cancelled).map((l) => `  ${l}`));
      if (result.cancelled) context.notice("plan stopped: /plan resume continues it", "warning");
    },
  }];
}
