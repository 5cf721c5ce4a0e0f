/**
 * A plan as text: the graph with each node's state, and the summary at the end. The model
 * wrote the plan, so its strings go through `cleanDeep()` (no escape sequence, control or bidi
 * override reaches the terminal) and a title stays on its one line (the live graph is redrawn
 * by counting lines).
 */
import { cleanDeep, visibleText } from "../core/terminal_text.ts";
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

/** The most characters of a node's title its line shows. */
const TITLE_CHARS = 100;

/**
 * One line per node, dependencies first: icon, id, state, title, what it waits on, time. A
 * title's runs of whitespace become one space and it is cut at {@linkcode TITLE_CHARS}, so no
 * title can push text onto a row that reads as another node's.
 */
export function planLines(written: PlanState, style: Theme): string[] {
  const state = cleanDeep(written);
  const width = idWidth(state);
  return topologicalOrder(state.nodes).map((id) => nodeLine(state, id, width, style));
}

/** Node `id`'s line as {@linkcode planLines} draws it; undefined when the plan has no such node. */
export function planLine(written: PlanState, id: string, style: Theme): string | undefined {
  if (!written.nodes.some((node) => node.id === id)) return undefined;
  const state = cleanDeep(written);
  return nodeLine(state, id, idWidth(state), style);
}

function idWidth(state: PlanState): number {
  return Math.max(...state.nodes.map((node) => node.id.length));
}

/** One node's line; `state` is cleaned already. */
function nodeLine(state: PlanState, id: string, width: number, style: Theme): string {
  const node = state.nodes.find((each) => each.id === id)!;
  const run = state.runs[id];
  const deps = node.dependsOn.length > 0 ? style.dim(` ← ${node.dependsOn.join(", ")}`) : "";
  const time = run.durationMs !== undefined ? style.dim(` ${seconds(run.durationMs)}`) : "";
  const flat = node.title.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  const title = chars.length > TITLE_CHARS ? `${chars.slice(0, TITLE_CHARS).join("")}…` : flat;
  return `${
    paint(run.state, `${ICONS[run.state]} ${id.padEnd(width)} ${run.state.padEnd(9)}`, style)
  }` +
    ` ${title}${deps}${time}`;
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
  // A worker's words: a run of spaces or blank glyphs would wrap a row of its own to column 0.
  const line = visibleText(text.trim().split("\n")[0].replace(/\s+/g, " "));
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
