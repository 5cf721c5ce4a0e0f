/**
 * A plan as text: the graph with each node's state, and the summary at the end. The model
 * wrote the plan, so its strings go through `terminalText()` (no escape sequence, control or bidi
 * override reaches the terminal), and what a row shows of them through `visibleText()`: a title
 * stays on its one line (the live graph is redrawn by counting lines), and a run of blank glyphs
 * shows counted, so no padding can push text onto a row that reads as another node's.
 */
import { cleanDeep, terminalText, visibleText } from "../core/terminal_text.ts";
import { topologicalOrder } from "../plan/graph.ts";
import { runOf } from "../plan/runs.ts";
import type { NodeRun, NodeState, PlanNode, PlanState } from "../plan/types.ts";
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

/** A node as its row shows it: its id, title and dependencies on one line each, and its run. */
interface Row {
  id: string;
  title: string;
  dependsOn: string[];
  run: NodeRun;
}

/**
 * One line per node, dependencies first: icon, id, state, title, what it waits on, time. A
 * title's runs of whitespace become one space, it is cut at {@linkcode TITLE_CHARS}, and what
 * would draw blank (the braille blank, Hangul fillers, zero-width characters) shows as its code
 * point with its count, so no title can push text onto a row that reads as another node's. A
 * node without a run shows as WAITING.
 */
export function planLines(written: PlanState, style: Theme): string[] {
  const rows = rowsOf(written);
  const width = idWidth(rows);
  return topologicalOrder(written.nodes).map((id) => nodeLine(rows.get(id)!, width, style));
}

/** Node `id`'s line as {@linkcode planLines} draws it; undefined when the plan has no such node. */
export function planLine(written: PlanState, id: string, style: Theme): string | undefined {
  const rows = rowsOf(written);
  const row = rows.get(id);
  return row === undefined ? undefined : nodeLine(row, idWidth(rows), style);
}

/**
 * Each node's row by its id (the first node of an id, should two share it), in the nodes' order,
 * in a `Map`: the ids are the model's text, and one like "constructor" names no member here.
 */
function rowsOf(state: PlanState): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const node of state.nodes) {
    if (rows.has(node.id)) continue;
    rows.set(node.id, rowOf(node, runOf(state, node.id) ?? { state: "WAITING" }));
  }
  return rows;
}

function rowOf(node: PlanNode, run: NodeRun): Row {
  const clean = cleanDeep(run);
  return {
    id: shown(node.id),
    title: title(node.title),
    dependsOn: node.dependsOn.map(shown),
    // A run read from a damaged session may name no state: it shows as WAITING.
    run: { ...clean, state: Object.hasOwn(ICONS, clean.state) ? clean.state : "WAITING" },
  };
}

/** A short piece of model text on one row: cleaned, with every space and blank glyph visible. */
function shown(text: string): string {
  return visibleText(terminalText(text).replace(/\s+/g, " ").trim());
}

/** A title on one row, cut at {@linkcode TITLE_CHARS} characters before it is made visible. */
function title(text: string): string {
  const chars = [...terminalText(text).replace(/\s+/g, " ").trim()];
  const cut = chars.length > TITLE_CHARS;
  return `${visibleText((cut ? chars.slice(0, TITLE_CHARS) : chars).join(""))}${cut ? "…" : ""}`;
}

function idWidth(rows: ReadonlyMap<string, Row>): number {
  return Math.max(0, ...[...rows.values()].map((row) => row.id.length));
}

function nodeLine(row: Row, width: number, style: Theme): string {
  const { id, run } = row;
  const deps = row.dependsOn.length > 0 ? style.dim(` ← ${row.dependsOn.join(", ")}`) : "";
  const time = run.durationMs !== undefined ? style.dim(` ${seconds(run.durationMs)}`) : "";
  return `${
    paint(run.state, `${ICONS[run.state]} ${id.padEnd(width)} ${run.state.padEnd(9)}`, style)
  }` +
    ` ${row.title}${deps}${time}`;
}

/**
 * The closing summary: each node's result or error (first line), then the counts (a node
 * without a run counts as WAITING).
 */
export function planSummary(written: PlanState, style: Theme, cancelled: boolean): string[] {
  const rows = rowsOf(written);
  const lines = topologicalOrder(written.nodes).map((key) => {
    const { id, run } = rows.get(key)!;
    const detail = detailOf(run);
    return `${paint(run.state, ICONS[run.state], style)} ${id}${detail ? `: ${detail}` : ""}`;
  });
  const counts = new Map<NodeState, number>();
  for (const { run } of rows.values()) {
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
    nodes: state.nodes.map((node) => ({
      ...node,
      ...(runOf(state, node.id) ?? { state: "WAITING" }),
    })),
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
