/** The planner's and the replanner's prompts, and the text of the messages they send. */
import { runOf } from "./runs.ts";
import type { PlanNode, PlanState } from "./types.ts";

/** A succeeded node's result is cut to this many characters in the replan request. */
export const REPLAN_RESULT_CHARS = 600;

const NODE_RULES =
  `Each node is done by a separate worker agent that can read and edit files and run commands in the workspace. A worker sees its own node's task and the results of the nodes it depends on, and the person's task only for orientation: not the other nodes. So make each task self-contained: name the files, functions and commands involved and say what done looks like.

Nodes whose dependencies have all succeeded run in parallel, at most 2 at once by default. Prefer small, independent nodes; make a node depend on another only when it needs that node's result or changes (two nodes that edit the same file should depend one on the other).

Answer with JSON only (no prose, no markdown fence) in exactly this shape:
{"nodes":[{"id":"...","title":"...","task":"...","dependsOn":["..."]}]}
- id: short kebab-case, unique (letters, digits and "-", at most 40 characters)
- title: a few words, shown on screen
- task: what the worker must do
- dependsOn: ids of the nodes it needs, [] for none; no node depends on itself, no cycles`;

const EXAMPLE =
  `Example, for the task "Add a --json flag to the stats command, test it and document it":
{"nodes":[{"id":"add-flag","title":"Add --json to stats","task":"In src/cli/stats.ts add a --json flag that prints the stats as one JSON object; keep the text output as it is.","dependsOn":[]},{"id":"test-flag","title":"Test --json","task":"The stats command in src/cli/stats.ts has a new --json flag. Add a test to tests/cli/stats_test.ts that runs it and parses the output; run deno test tests/cli/stats_test.ts until it passes.","dependsOn":["add-flag"]},{"id":"docs","title":"Document --json","task":"In README.md, under the stats command, document a --json flag that prints the stats as one JSON object, with one example.","dependsOn":[]}]}`;

/** The system prompt of the planning request. */
export const PLANNER_SYSTEM_PROMPT =
  `You plan the work of a coding agent. Break the person's task into a graph of nodes; usually 1 to 12 nodes, and a simple task is one node.

${NODE_RULES}

${EXAMPLE}`;

/** The system prompt of the replanning request. */
export const REPLANNER_SYSTEM_PROMPT =
  `You repair the plan of a coding agent after one of its nodes failed. Answer with the nodes to add to the plan so the person's task still gets done: for example a node that works around the cause and does the failed node's work, and nodes that do the work of the nodes it blocked. Existing nodes are never changed or run again: a FAILED or BLOCKED node stays so, so never depend on one. New nodes may depend on the other existing nodes by id and must use ids the plan does not have yet. When nothing can be done about the failure, answer {"nodes":[]}.

${NODE_RULES}`;

/** The user message of the planning request. */
export function planningMessage(task: string, context?: string): string {
  return [`The task:\n${task}`, workspace(context), "Answer with the plan as JSON only."]
    .filter((part) => part !== "").join("\n\n");
}

/** The user message of the replanning request: the task, the plan with its states, the failure. */
export function replanningMessage(
  state: PlanState,
  failed: { node: PlanNode; error: string },
  context?: string,
): string {
  return [
    `The person's task:\n${state.task}`,
    workspace(context),
    `The plan so far:\n${state.nodes.map((node) => describeNode(node, state)).join("\n")}`,
    `Node "${failed.node.id}" failed: ${failed.error}`,
    "Answer with the nodes to add as JSON only.",
  ].filter((part) => part !== "").join("\n\n");
}

/** The user message that asks again after a rejected answer. */
export function correctionMessage(problems: readonly string[]): string {
  return `Your plan was rejected: ${
    problems.join("; ")
  }. Answer again with the corrected JSON only.`;
}

function workspace(context: string | undefined): string {
  const text = context?.trim() ?? "";
  return text === "" ? "" : `The workspace:\n${text}`;
}

function describeNode(node: PlanNode, state: PlanState): string {
  const run = runOf(state, node.id);
  const lines = [
    `- ${node.id} [${run?.state ?? "WAITING"}] ${JSON.stringify(node.title)}`,
    `  dependsOn: ${JSON.stringify(node.dependsOn)}`,
    `  task: ${node.task}`,
  ];
  if (run?.result !== undefined) lines.push(`  result: ${clip(run.result)}`);
  if (run?.error !== undefined) lines.push(`  error: ${run.error}`);
  return lines.join("\n");
}

function clip(text: string): string {
  const flat = text.trim();
  return flat.length > REPLAN_RESULT_CHARS ? `${flat.slice(0, REPLAN_RESULT_CHARS)}…` : flat;
}
