/**
 * A plan's life in its session: `plan` entries recording the plan when it is made, every change
 * of a node's run, and appended nodes. Replaying them (on the path to the leaf) gives the plan's
 * state back, so an interrupted plan continues where it stopped.
 */
import * as z from "../core/zod.ts";
import type { Session } from "../session/session.ts";
import type { SessionEntry } from "../session/types.ts";
import { PlanValidationError } from "./errors.ts";
import { appendNodes, MAX_PLAN_NODES, parsePlan } from "./graph.ts";
import { runMap, runOf } from "./runs.ts";
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
 * The newest plan's own record lacks its shape (a damaged or hand-edited line): what it held is
 * not known, so the plan cannot continue, and an older plan is not what the person meant.
 */
export class DamagedPlanError extends Error {
  override name = "DamagedPlanError";
}

/**
 * The newest plan on the session's path to its leaf, with every recorded change applied. The
 * session's replay carries the plan's records across compactions (`Checkpoint.plan`), so a long
 * session's history before its last compaction is read only when no record says where its plan
 * began (no plan at all, or a compaction written before tern carried plans).
 * @throws {DamagedPlanError} when the newest plan's record lacks its shape, or holds a plan that
 *   breaks the rules a plan is made under (see `replayPlan`).
 */
export function latestPlan(session: Session): PlanState | undefined {
  const carried = session.state().plan;
  if (carried !== undefined) return replayRecords(carried.filter(isRecord));
  return replayPlan(session.entriesTo());
}

/**
 * The newest plan in `entries` (a path, oldest first), replayed; undefined when none. Its nodes
 * are held to the rules of a planner's answer (`parsePlan`), and each append to those of an
 * append (`appendNodes`): an append that breaks them is skipped, as a damaged line is.
 * @throws {DamagedPlanError} when the newest plan's record lacks its shape, or its nodes break
 *   those rules (naming how).
 */
export function replayPlan(entries: readonly SessionEntry[]): PlanState | undefined {
  return replayRecords(
    entries.flatMap((entry) => entry.type === "plan" && isRecord(entry.data) ? [entry.data] : []),
  );
}

/**
 * The newest plan in `records` (oldest first), replayed; undefined when none, and
 * {@linkcode DamagedPlanError} when the newest plan's own record lacks its shape. The runs are
 * rebuilt from the nodes (each its newest recorded run, else WAITING), in a map without a
 * prototype: the recorded plan's `runs` is keyed by node id, and the session masks values, not
 * keys, so its keys are trusted only where they name a node. A node's change or an append that
 * lacks its shape is skipped, as a damaged line is: a node keeps its run before it.
 */
function replayRecords(records: readonly PlanRecord[]): PlanState | undefined {
  const start = records.findLastIndex((record) => record.kind === "plan");
  if (start < 0) return undefined;
  const first = planRecordShape.safeParse(records[start]);
  if (!first.success) {
    throw new DamagedPlanError(
      "its newest plan's record is damaged (it lacks a plan's id, task or steps), so what the " +
        "plan held is not known",
    );
  }
  const plan = first.data.plan;
  const recorded = { runs: plan.runs } as Pick<PlanState, "runs">;
  const nodes = recordedNodes(plan.nodes);
  const state: PlanState = {
    id: plan.id,
    task: plan.task,
    nodes,
    runs: runMap(nodes.map((node) => [node.id, shapedRun(runOf(recorded, node.id))])),
  };
  for (const record of records.slice(start + 1)) {
    if (record.kind === "plan" || record.planId !== state.id) continue;
    if (record.kind === "node" && Object.hasOwn(state.runs, record.nodeId)) {
      const run = runShape.safeParse(record.run);
      if (run.success) state.runs[record.nodeId] = run.data;
    } else if (record.kind === "append") {
      // Held to the rules an append is recorded under (the whole graph valid, at most
      // MAX_PLAN_NODES nodes): one that breaks them was not written by tern, and is skipped.
      const many = Array.isArray(record.nodes) && record.nodes.length > MAX_PLAN_NODES;
      const added = z.array(nodeShape).safeParse(many ? undefined : record.nodes);
      if (!added.success) continue;
      let merged: PlanNode[];
      try {
        merged = appendNodes(state.nodes, added.data);
      } catch (error) {
        if (error instanceof PlanValidationError) continue;
        throw error;
      }
      for (const node of merged.slice(state.nodes.length)) {
        state.runs[node.id] = { state: "WAITING" };
      }
      state.nodes = merged;
    }
  }
  return state;
}

/**
 * A plan record's nodes, held to the rules the planner's answer was held to ({@linkcode parsePlan}:
 * ids, sizes, at most {@linkcode MAX_PLAN_NODES} nodes, a valid graph). A session file is text
 * anyone can edit or hand over (`--resume <path>`): one that breaks them would otherwise run
 * thousands of steps, or ids no plan has, before anything said so.
 * @throws {DamagedPlanError} naming the problems
 */
function recordedNodes(nodes: readonly PlanNode[]): PlanNode[] {
  try {
    // Counted first: a line of megabytes would take zod long to read node by node.
    if (nodes.length > MAX_PLAN_NODES) {
      throw new PlanValidationError([
        `it has ${nodes.length} steps: a plan has at most ${MAX_PLAN_NODES}`,
      ]);
    }
    return parsePlan({ nodes });
  } catch (error) {
    if (!(error instanceof PlanValidationError)) throw error;
    throw new DamagedPlanError(
      `its newest plan breaks the rules every plan is held to (${
        error.problems.join("; ")
      }), so it is not run`,
    );
  }
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

/** A node as its records hold it (the graph's rules are the executor's to check). */
const nodeShape = z.object({
  id: z.string(),
  title: z.string(),
  task: z.string(),
  dependsOn: z.array(z.string()),
});

/** A run as its records hold it: a known state, and every field of its own type. */
const runShape = z.object({
  state: z.enum(["WAITING", "RUNNING", "SUCCEEDED", "FAILED", "BLOCKED"]),
  result: z.string().optional(),
  error: z.string().optional(),
  blockedBy: z.array(z.string()).optional(),
  calls: z.array(z.string()).optional(),
  moreCalls: z.boolean().optional(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  durationMs: z.number().optional(),
});

const planRecordShape = z.object({
  plan: z.object({
    id: z.string(),
    task: z.string(),
    nodes: z.array(nodeShape),
    runs: z.unknown(),
  }),
});

/** `value` as a run when it has a run's shape, else WAITING. */
function shapedRun(value: unknown): NodeRun {
  const run = runShape.safeParse(value);
  return run.success ? run.data : { state: "WAITING" };
}
