/**
 * A plan as text: the graph with each node's state, and the summary at the end. The model
 * wrote the plan, so its strings go through `cleanDeep()` (no escape sequence, control or bidi
 * override reaches the terminal) and a title stays on its one line (the live graph is redrawn
 * by counting lines).
 */
import { cleanDeep } from "../core/terminal_text.ts";
import { topologicalOrder } from "../plan/graph.ts";
import type { NodeRun, NodeState, PlanState } from "../plan/types.ts";
import type { Theme } from "../tui/theme.ts";

const ICONS: Record<NodeState, string> = {
  WAITING: "·",
  RUNNING: "▸",
  SUCCEEDED: "✓",
  FAILED: "✗",
  BLOCKED: "⊘",
};

/** One line per node, dependencies first: icon, id, state, title, what it waits on, time. */
export function planLines(written: PlanState, style: Theme): string[] {
  const state = cleanDeep(written);
  const order = topologicalOrder(state.nodes);
  const byId = new Map(state.nodes.map((node) => [node.id, node]));
  const width = Math.max(...state.nodes.map((node) => node.id.length));
  return order.map((id) => {
    const node = byId.get(id)!;
    const run = state.runs[id];
    const deps = node.dependsOn.length > 0 ? style.dim(` ← ${node.dependsOn.join(", ")}`) : "";
    const time = run.durationMs !== undefined ? style.dim(` ${seconds(run.durationMs)}`) : "";
    return `${
      paint(run.state, `${ICONS[run.state]} ${id.padEnd(width)} ${run.state.padEnd(9)}`, style)
    }` +
      ` ${node.title.replace(/\s*\n\s*/g, " ")}${deps}${time}`;
  });
}

/** The closing summary: each node's result or error (first line), then the counts. */
export function planSummary(written: PlanState, style: Theme, cancelled: boolean): string[] {
  const state = cleanDeep(written);
  const lines = topologicalOrder(state.nodes).map((id) => {
    const run = state.runs[id];
    const detail = detailOf(run);
    return `${paint(run.state, ICONS[run.state], style)} ${id}${detail ? `: ${detail}` : ""}`;
  });
  const counts = new Map<NodeState, number>();
  for (const run of Object.values(state.runs)) {
    counts.set(run.state, (counts.get(run.state) ?? 0) + 1);
  }
  const parts = (["SUCCEEDED", "FAILED", "BLOCKED", "WAITING"] as const)
    .filter((s) => counts.has(s))
    .map((s) => `${counts.get(s)} ${s.toLowerCase()}`);
  lines.push(`${cancelled ? "interrupted: " : ""}${parts.join(", ")}`);
  return lines;
}

/** `--output json`: each node with its state, result and timing. */
export function planJson(state: PlanState, extra: Record<string, unknown>): string {
  return JSON.stringify({
    ...extra,
    planId: state.id,
    task: state.task,
    nodes: state.nodes.map((node) => ({ ...node, ...state.runs[node.id] })),
  });
}

function detailOf(run: NodeRun): string {
  const text = run.state === "SUCCEEDED" ? run.result : run.error;
  if (!text) return "";
  const line = text.trim().split("\n")[0];
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

function paint(state: NodeState, text: string, style: Theme): string {
  switch (state) {
    case "SUCCEEDED":
      return style.green(text);
    case "FAILED":
      return style.red(text);
    case "BLOCKED":
      return style.yellow(text);
    case "RUNNING":
      return style.cyan(text);
    default:
      return style.dim(text);
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
