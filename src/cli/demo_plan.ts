/**
 * The plan part of `tern demo`: the real planner and executor (`runPlan`) in the demo's
 * conversation, each step's tool calls and state changes printed as a timeline as they happen,
 * and the checks that the two independent steps overlapped and the dependent one ran after both.
 */
import type { Conversation } from "../harness/conversation.ts";
import { runPlan } from "../harness/plan_run.ts";
import type { PlanState } from "../plan/types.ts";
import type { Theme } from "../tui/theme.ts";
import { createTextRenderer } from "./output/text.ts";
import { planLines } from "./plan_view.ts";
import type { EmitFn } from "../core/events.ts";

/** One change of a step's state, in the order the executor reported them. */
interface Change {
  nodeId: string;
  state: string;
  /** Milliseconds since the plan started. */
  at: number;
}

/** How the plan went: its final state and what its checks found wrong (none: it passed). */
export interface DemoPlanOutcome {
  state?: PlanState;
  /** What the timeline shows, in words (the overlap and the order), for RESULT. */
  facts: string[];
  problems: string[];
}

/**
 * Plans and runs `task` in `conversation` (two steps at once), printing the timeline and the
 * graph; never throws for a failed plan (it is a problem in the outcome).
 */
export async function runDemoPlan(
  conversation: Conversation,
  task: string,
  options: { print: (line: string) => void; style: Theme; terminal: boolean; signal: AbortSignal },
): Promise<DemoPlanOutcome> {
  const { print, style } = options;
  const start = performance.now();
  const since = () => Math.round(performance.now() - start);
  const line = (nodeId: string, text: string) =>
    print(`    ${style.dim(`+${since()} ms`.padEnd(9))} ${nodeId.padEnd(8)} ${text}`);
  const changes: Change[] = [];
  const renderers = new Map<string, EmitFn>();
  const rendererFor = (nodeId: string) => {
    let render = renderers.get(nodeId);
    if (render === undefined) {
      render = createTextRenderer({
        out: () => {}, // the step's answer is its result, shown in the graph below
        err: (text) => text.trimEnd().split("\n").forEach((part) => line(nodeId, part)),
        terminal: options.terminal,
        style,
      });
      renderers.set(nodeId, render);
    }
    return render;
  };
  let result;
  try {
    result = await runPlan({
      conversation,
      task,
      concurrency: 2,
      signal: options.signal,
      onPlanned: (plan) => {
        print(`    plan ${plan.id}: ${plan.nodes.length} steps, at most 2 at once`);
      },
      onUpdate: (plan, nodeId) => {
        const state = plan.runs[nodeId].state;
        changes.push({ nodeId, state, at: since() });
        if (state === "WAITING") return;
        const after = plan.nodes.find((node) => node.id === nodeId)?.dependsOn ?? [];
        const note = state === "RUNNING" && after.length > 0 ? ` (after ${after.join(", ")})` : "";
        line(nodeId, `${state}${note}`);
      },
      onNote: (text) => print(`    ${text}`),
      onNodeEvent: (nodeId, event) => rendererFor(nodeId)(event),
    });
  } catch (error) {
    return { facts: [], problems: [`the plan did not run: ${(error as Error).message}`] };
  }
  const state = result.state;
  print("    the graph, as it ended:");
  for (const text of planLines(state, style)) print(`      ${text}`);
  return { state, ...checkTimeline(state, changes) };
}

/**
 * The timeline's claims, checked from the order of the executor's reports: `farewell` and
 * `shout` both RUNNING before either ended, `exports` RUNNING only after both SUCCEEDED.
 */
export function checkTimeline(
  state: PlanState,
  changes: readonly Change[],
): { facts: string[]; problems: string[] } {
  const problems: string[] = [];
  for (const node of state.nodes) {
    const run = state.runs[node.id];
    if (run.state !== "SUCCEEDED") {
      problems.push(`plan step "${node.id}" ${run.state}${run.error ? `: ${run.error}` : ""}`);
    }
  }
  const first = (nodeId: string, wanted: string) =>
    changes.findIndex((c) => c.nodeId === nodeId && c.state === wanted);
  const ended = (nodeId: string) =>
    changes.findIndex((c) => c.nodeId === nodeId && c.state !== "RUNNING" && c.state !== "WAITING");
  const [aStart, bStart] = [first("farewell", "RUNNING"), first("shout", "RUNNING")];
  const [aEnd, bEnd] = [ended("farewell"), ended("shout")];
  const facts: string[] = [];
  if ([aStart, bStart, aEnd, bEnd].includes(-1)) {
    problems.push("farewell and shout did not both run");
  } else if (Math.max(aStart, bStart) > Math.min(aEnd, bEnd)) {
    problems.push("farewell and shout did not run at once: one ended before the other started");
  } else {
    const both = changes[Math.min(aEnd, bEnd)].at - changes[Math.max(aStart, bStart)].at;
    facts.push(`farewell and shout ran at once (both running for ${both} ms)`);
  }
  const dependent = first("exports", "RUNNING");
  if (dependent === -1) {
    problems.push("exports did not run");
  } else if (
    dependent < first("farewell", "SUCCEEDED") || dependent < first("shout", "SUCCEEDED") ||
    first("farewell", "SUCCEEDED") === -1 || first("shout", "SUCCEEDED") === -1
  ) {
    problems.push("exports started before farewell and shout had both succeeded");
  } else {
    facts.push("exports started after both had succeeded");
  }
  return { facts, problems };
}
