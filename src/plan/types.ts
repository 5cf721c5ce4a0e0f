/** The plan-and-execute vocabulary: a task graph and the state of each of its nodes. */

/** One node of the task graph, as the planner (or a person) wrote it. */
export interface PlanNode {
  /** Unique within the plan: letters, digits, `_` and `-`, at most 40 characters. */
  id: string;
  /** A few words, for the graph on screen. */
  title: string;
  /** What the node's worker is asked to do. */
  task: string;
  /** Ids of the nodes whose results this one needs; it runs after all of them succeeded. */
  dependsOn: string[];
}

/** Where a node is: WAITING → RUNNING → SUCCEEDED | FAILED; WAITING → BLOCKED. */
export type NodeState = "WAITING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "BLOCKED";

/** What happened to one node (so far). */
export interface NodeRun {
  state: NodeState;
  /** SUCCEEDED: the worker's final answer (its head and tail: `MAX_RESULT_CHARS` in executor.ts). */
  result?: string;
  /** FAILED: why; BLOCKED: which failed or blocked dependency blocked it. */
  error?: string;
  /** BLOCKED: the dependencies that failed or are blocked. */
  blockedBy?: string[];
  /**
   * RUNNING: the calls that may change something (not read-only) its worker started, after
   * those of earlier attempts that were interrupted; WAITING: those of interrupted attempts
   * (the plan was cancelled, or tern killed), told to the next. Short summaries, oldest first;
   * absent when there were none.
   */
  calls?: string[];
  /** More calls were started than `calls` holds. */
  moreCalls?: boolean;
  /** ISO times. */
  startedAt?: string;
  endedAt?: string;
  durationMs?: number;
}

/** A plan and where each node is. */
export interface PlanState {
  /** Unique within the session. */
  id: string;
  /** The person's task the plan is for. */
  task: string;
  nodes: PlanNode[];
  /**
   * Node id → its run; every node has one (WAITING at first). The ids are the model's text: read
   * a run with `runOf()` and make the map with `runMap()` (src/plan/runs.ts), never by indexing
   * an object that inherits members (`constructor`, `__proto__`).
   */
  runs: Record<string, NodeRun>;
}
