/**
 * A plan's life in its session: `plan` entries recording the plan when it is made, every change
 * of a node's run, and appended nodes. Replaying them (on the path to the leaf) gives the plan's
 * state back, so an interrupted plan continues where it stopped.
 */
import type { Session } from "../session/session.ts";
import type { SessionEntry } from "../session/types.ts";
import { runMap, runsOfNodes } from "./runs.ts";
import type { NodeRun, PlanNode, PlanState } from "./types.ts";

/** What one `plan` entry holds. */
export type PlanRecord =
  | { kind: "plan"; plan: PlanState }
  | { kind: "node"; planId: string; nodeId: string; run: NodeRun }
  | { kind: "append"; planId: string; nodes: PlanNode[] };

/** Appends `record` to the session as a `plan` entry (one whole line). */
export function recordPlan(session: Session, record: PlanRecord): void {
  session.append({ type: "plan", data: record });
}

/**
 * The newest plan on the session's path to its leaf, with every recorded change applied. The
 * session's replay carries the plan's records across compactions (`Checkpoint.plan`), so a long
 * session's history before its last compaction is read only when no record says where its plan
 * began (no plan at all, or a compaction written before tern carried plans).
 */
export function latestPlan(session: Session): PlanState | undefined {
  const carried = session.state().plan;
  if (carried !== undefined) return replayRecords(carried.filter(isRecord));
  return replayPlan(session.entriesTo());
}

/** The newest plan in `entries` (a path, oldest first), replayed; undefined when none. */
export function replayPlan(entries: readonly SessionEntry[]): PlanState | undefined {
  return replayRecords(
    entries.flatMap((entry) => entry.type === "plan" && isRecord(entry.data) ? [entry.data] : []),
  );
}

/**
 * The newest plan in `records` (oldest first), replayed; undefined when none. The runs are
 * rebuilt from the nodes (each its newest recorded run, else WAITING), in a map without a
 * prototype: the recorded plan's `runs` is keyed by node id, and the session masks values, not
 * keys, so its keys are trusted only where they name a node.
 */
function replayRecords(records: readonly PlanRecord[]): PlanState | undefined {
  const start = records.findLastIndex((record) => record.kind === "plan");
  if (start < 0) return undefined;
  const first = records[start] as Extract<PlanRecord, { kind: "plan" }>;
  const plan: PlanState = structuredClone(first.plan);
  const state: PlanState = { ...plan, runs: runsOfNodes(plan) };
  for (const record of records.slice(start + 1)) {
    if (record.kind === "plan" || record.planId !== state.id) continue;
    if (record.kind === "node" && Object.hasOwn(state.runs, record.nodeId)) {
      state.runs[record.nodeId] = record.run;
    } else if (record.kind === "append") {
      for (const node of record.nodes) {
        state.nodes.push(node);
        if (!Object.hasOwn(state.runs, node.id)) state.runs[node.id] = { state: "WAITING" };
      }
    }
  }
  return state;
}

/** A new plan's state: every node WAITING. */
export function newPlanState(id: string, task: string, nodes: readonly PlanNode[]): PlanState {
  return {
    id,
    task,
    nodes: structuredClone([...nodes]),
    runs: runMap(nodes.map((node): [string, NodeRun] => [node.id, { state: "WAITING" }])),
  };
}

function isRecord(data: unknown): data is PlanRecord {
  if (typeof data !== "object" || data === null) return false;
  const kind = (data as { kind?: unknown }).kind;
  return kind === "plan" || kind === "node" || kind === "append";
}
