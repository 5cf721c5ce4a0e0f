/**
 * Runs a task graph: ready nodes (every dependency SUCCEEDED) start in topological order, up to
 * a concurrency limit; a FAILED or BLOCKED node blocks its dependents at once, transitively,
 * while independent branches carry on; after a failure an optional, bounded replan may append
 * nodes. Each node's work is an injected function (the CLI's ReAct worker), so this file does
 * no I/O and is deterministic given that function.
 */
import { PlanValidationError } from "./errors.ts";
import { appendNodes, topologicalOrder, validatePlan } from "./graph.ts";
import { runsOfNodes } from "./runs.ts";
import type { NodeRun, PlanNode, PlanState } from "./types.ts";
import { truncateMiddle } from "../tools/truncate.ts";

/**
 * The most characters of a node's result or failure kept, its head and tail (a worker's answer
 * may be megabytes, and each dependent's prompt carries the results of all its dependencies).
 */
export const MAX_RESULT_CHARS = 20_000;

/** How one node's worker ended. */
export interface NodeOutcome {
  ok: boolean;
  /** ok: the worker's answer; else why it failed */
  text: string;
}

/** Calls kept in a node's run; more are counted by `moreCalls` only. */
export const MAX_RECORDED_CALLS = 20;
/** Characters of one call's summary kept. */
const MAX_CALL_CHARS = 200;

/** What one attempt at a node knows and tells, besides its inputs. */
export interface NodeAttempt {
  /**
   * The calls that earlier attempts of this node started before they were interrupted (the
   * plan cancelled, tern killed): their effects may be in the workspace. Empty on a first try.
   */
  interrupted: readonly string[];
  /** Earlier attempts started more calls than `interrupted` lists. */
  moreInterrupted: boolean;
  /**
   * The worker started a call that may change something (`summary`: the tool and what it
   * runs): kept in the node's run (reported through `onUpdate`, so it is recorded before the
   * call runs) until the node ends. Ignored once the attempt ended.
   */
  callStarted(summary: string): void;
}

/** A dependency's result, as given to the node that needs it. */
export interface NodeInput {
  id: string;
  title: string;
  result: string;
}

/** What {@linkcode PlanExecutor} runs and whom it tells. */
export interface ExecutorOptions {
  /**
   * The initial state (copied, never mutated); on resume SUCCEEDED runs are kept as they are. A
   * node without a run is WAITING; a run of no node is dropped.
   */
  state: PlanState;
  /** Ready nodes running at once, a whole number >= 1; default 2. */
  concurrency?: number;
  /**
   * Runs one node's ReAct worker. `inputs`: its dependencies' results, in `dependsOn` order.
   * Must honour `signal`. May throw: that is a FAILED node with the error's message.
   */
  runNode(
    node: PlanNode,
    inputs: NodeInput[],
    signal: AbortSignal,
    attempt: NodeAttempt,
  ): Promise<NodeOutcome>;
  /**
   * Told of every change of one node's run (persist it, redraw); called synchronously, in
   * order. `run` and `state` are fresh copies, the caller's to keep. Should not throw: an
   * exception cancels the plan and `run()` rejects with it once running nodes ended.
   */
  onUpdate?(nodeId: string, run: NodeRun, state: PlanState): void;
  /** Told when nodes were appended (after validation); fresh copies, as for `onUpdate`. */
  onAppend?(added: PlanNode[], state: PlanState): void;
  /**
   * After a node FAILED: nodes to append; undefined or `[]` for none. Called at most
   * `maxReplans` times per executor. A replan that throws or does not validate changes nothing
   * and is reported through `onReplanRejected`. `signal` aborts when the plan is cancelled; a
   * replan still pending then is ignored.
   */
  replan?(
    failed: { node: PlanNode; error: string },
    state: PlanState,
    signal: AbortSignal,
  ): Promise<PlanNode[] | undefined>;
  /** Told why a replan changed nothing (its validation problems, or `replan failed: <why>`). */
  onReplanRejected?(problems: string[]): void;
  /** Replans allowed, a whole number >= 0; default 1. */
  maxReplans?: number;
  /**
   * Cancels the plan: running nodes go back to WAITING (one whose worker had already answered is
   * SUCCEEDED) and nothing new starts.
   */
  signal?: AbortSignal;
  /** The clock, for tests; default `new Date()`. */
  now?: () => Date;
}

/** How a run of the plan ended. */
export interface PlanResult {
  /** A copy of the final state. */
  state: PlanState;
  /** Whether `signal` stopped it. */
  cancelled: boolean;
  /** Replans attempted so far (accepted or not). */
  replans: number;
}

/** What {@linkcode PlanExecutor.append} did. */
export type AppendResult = { ok: true } | { ok: false; problems: string[] };

/** One `run()` in progress. */
interface ActiveRun {
  controller: AbortController;
  done: PromiseWithResolvers<PlanResult>;
  pendingReplans: number;
  failure?: { error: unknown };
  detach(): void;
}

const STOPPING = new Set(["FAILED", "BLOCKED"]);

/** Executes a plan's nodes; see the module doc for the rules. */
export class PlanExecutor {
  #options: ExecutorOptions;
  #concurrency: number;
  #maxReplans: number;
  #now: () => Date;
  /** The live state; callers only ever see copies. */
  #state: PlanState;
  #byId = new Map<string, PlanNode>();
  #order: string[] = [];
  /** Running node id → when it started. */
  #running = new Map<string, Date>();
  #replans = 0;
  #active: ActiveRun | undefined;
  #scheduling = false;
  #scheduleAgain = false;

  /**
   * @throws {RangeError} for a bad `concurrency` or `maxReplans`
   * @throws {PlanValidationError} if the state's graph is not valid
   */
  constructor(options: ExecutorOptions) {
    const { concurrency = 2, maxReplans = 1 } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`Cannot run a plan: concurrency must be 1 or more, got ${concurrency}`);
    }
    if (!Number.isInteger(maxReplans) || maxReplans < 0) {
      throw new RangeError(`Cannot run a plan: maxReplans must be 0 or more, got ${maxReplans}`);
    }
    this.#options = options;
    this.#concurrency = concurrency;
    this.#maxReplans = maxReplans;
    this.#now = options.now ?? (() => new Date());
    this.#state = structuredClone(options.state);
    // A map without a prototype, one run per node: an id like "constructor" is a node's own.
    this.#state.runs = runsOfNodes(this.#state);
    const problems = validatePlan(this.#state.nodes);
    if (problems.length > 0) throw new PlanValidationError(problems);
    this.#index();
  }

  /** A copy of the current state. */
  get state(): PlanState {
    return structuredClone(this.#state);
  }

  /**
   * Resets every run that is not SUCCEEDED to WAITING (each reset reported through
   * `onUpdate`; one that was RUNNING or cancelled keeps the calls it started, for the next
   * attempt), then runs until no node can make progress; resolves once every started node
   * has ended (and, unless cancelled, every pending replan was settled). Calling it while it
   * runs returns the same promise; calling it again afterwards runs what is left (e.g. nodes
   * appended since). Never rejects, except with an exception thrown by a callback.
   */
  run(): Promise<PlanResult> {
    if (this.#active) return this.#active.done.promise;
    const signal = this.#options.signal;
    const controller = new AbortController();
    const onAbort = () => {
      controller.abort();
      this.#schedule();
    };
    const active: ActiveRun = {
      controller,
      done: Promise.withResolvers<PlanResult>(),
      pendingReplans: 0,
      detach: () => signal?.removeEventListener("abort", onAbort),
    };
    this.#active = active;
    for (const node of this.#state.nodes) {
      const run = this.#state.runs[node.id];
      const reset = resetRun(run);
      if (reset !== undefined) this.#set(node.id, reset);
    }
    if (signal?.aborted) controller.abort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    this.#schedule();
    return active.done.promise;
  }

  /**
   * Appends nodes (by the person, while running or before), accepted only if the whole graph
   * validates ({@linkcode appendNodes}); a rejected append changes nothing. New nodes start
   * WAITING and, during `run()`, are scheduled at once.
   */
  append(nodes: PlanNode[]): AppendResult {
    let merged: PlanNode[];
    try {
      merged = appendNodes(this.#state.nodes, nodes);
    } catch (error) {
      if (error instanceof PlanValidationError) return { ok: false, problems: error.problems };
      throw error;
    }
    const added = merged.slice(this.#state.nodes.length);
    if (added.length === 0) return { ok: true };
    this.#state.nodes = merged;
    for (const node of added) this.#state.runs[node.id] = { state: "WAITING" };
    this.#index();
    this.#notify(() => this.#options.onAppend?.(structuredClone(added), this.state));
    this.#schedule();
    return { ok: true };
  }

  #index(): void {
    this.#byId = new Map(this.#state.nodes.map((node) => [node.id, node]));
    this.#order = topologicalOrder(this.#state.nodes);
  }

  #set(id: string, run: NodeRun): void {
    this.#state.runs[id] = run;
    this.#notify(() => this.#options.onUpdate?.(id, structuredClone(run), this.state));
  }

  /** Calls back; outside `run()` an exception reaches the caller, inside it cancels the run. */
  #notify(callback: () => void): void {
    const active = this.#active;
    if (!active) return callback();
    try {
      callback();
    } catch (error) {
      active.failure ??= { error };
      active.controller.abort();
    }
  }

  /** Blocks and starts what it can; re-entrant calls (from callbacks) just ask for one more pass. */
  #schedule(): void {
    if (this.#scheduling) {
      this.#scheduleAgain = true;
      return;
    }
    this.#scheduling = true;
    try {
      do {
        this.#scheduleAgain = false;
        this.#step();
      } while (this.#scheduleAgain);
    } finally {
      this.#scheduling = false;
    }
    this.#settleIfDone();
  }

  #step(): void {
    const active = this.#active;
    if (!active) return;
    const runs = this.#state.runs;
    for (const id of this.#order) {
      if (runs[id].state !== "WAITING") continue;
      const blockers = this.#byId.get(id)!.dependsOn.filter((dep) => STOPPING.has(runs[dep].state));
      if (blockers.length === 0) continue;
      const named = blockers.map((dep) => `"${dep}" (${runs[dep].state})`).join(", ");
      this.#set(id, { state: "BLOCKED", blockedBy: blockers, error: `blocked by ${named}` });
    }
    for (const id of this.#order) {
      if (active.controller.signal.aborted || this.#running.size >= this.#concurrency) return;
      const node = this.#byId.get(id)!;
      const ready = node.dependsOn.every((dep) => runs[dep].state === "SUCCEEDED");
      if (runs[id].state === "WAITING" && ready) this.#start(node, active);
    }
  }

  #start(node: PlanNode, active: ActiveRun): void {
    const startedAt = this.#now();
    const { calls = [], moreCalls = false } = this.#state.runs[node.id];
    this.#running.set(node.id, startedAt);
    this.#set(node.id, {
      state: "RUNNING",
      startedAt: startedAt.toISOString(),
      ...startedCalls(calls, moreCalls),
    });
    const inputs = node.dependsOn.map((dep) => ({
      id: dep,
      title: this.#byId.get(dep)!.title,
      // Cut here too: a plan resumed from records written before results were capped.
      result: truncateMiddle(this.#state.runs[dep].result ?? "", MAX_RESULT_CHARS),
    }));
    const attempt: NodeAttempt = {
      interrupted: [...calls],
      moreInterrupted: moreCalls,
      callStarted: (summary) => {
        // A worker that outlived its attempt (ended, cancelled) changes nothing.
        if (this.#running.get(node.id) !== startedAt) return;
        const run = this.#state.runs[node.id];
        const kept = run.calls ?? [];
        if (kept.length >= MAX_RECORDED_CALLS) {
          if (!run.moreCalls) this.#set(node.id, { ...run, moreCalls: true });
          return;
        }
        const line = summary.length > MAX_CALL_CHARS
          ? `${summary.slice(0, MAX_CALL_CHARS)}…`
          : summary;
        this.#set(node.id, { ...run, calls: [...kept, line] });
      },
    };
    const signal = active.controller.signal;
    Promise.resolve()
      .then(() => this.#options.runNode(structuredClone(node), inputs, signal, attempt))
      .then(
        (outcome) => this.#end(node, outcome, active),
        (error) => this.#end(node, { ok: false, text: messageOf(error) }, active),
      )
      .catch((error) => {
        active.failure ??= { error };
        active.controller.abort();
      });
  }

  #end(node: PlanNode, outcome: NodeOutcome, active: ActiveRun): void {
    const startedAt = this.#running.get(node.id)!;
    this.#running.delete(node.id);
    // A worker that gave its answer before it saw the cancel did its step: kept SUCCEEDED, so a
    // resume does not run it again (a worker that failed may have failed because of the cancel).
    if (active.controller.signal.aborted && !outcome.ok) {
      const { calls = [], moreCalls = false } = this.#state.runs[node.id];
      this.#set(node.id, {
        state: "WAITING",
        error: "cancelled",
        ...startedCalls(calls, moreCalls),
      });
    } else {
      const endedAt = this.#now();
      const timing = {
        startedAt: startedAt.toISOString(),
        endedAt: endedAt.toISOString(),
        durationMs: Math.max(0, endedAt.getTime() - startedAt.getTime()),
      };
      const text = truncateMiddle(outcome.text, MAX_RESULT_CHARS);
      if (outcome.ok) this.#set(node.id, { state: "SUCCEEDED", ...timing, result: text });
      else {
        const error = text || `Node "${node.id}" failed without saying why`;
        this.#set(node.id, { state: "FAILED", ...timing, error });
        this.#replan(node, error, active);
      }
    }
    this.#schedule();
  }

  #replan(node: PlanNode, error: string, active: ActiveRun): void {
    const replan = this.#options.replan;
    if (!replan || this.#replans >= this.#maxReplans || active.controller.signal.aborted) return;
    this.#replans++;
    active.pendingReplans++;
    const signal = active.controller.signal;
    const reject = (problems: string[]) => {
      this.#notify(() => this.#options.onReplanRejected?.(problems));
    };
    Promise.resolve()
      .then(() => replan({ node: structuredClone(node), error }, this.state, signal))
      .then(
        (nodes) => {
          if (signal.aborted || !nodes || nodes.length === 0) return;
          const appended = this.append(nodes);
          if (!appended.ok) reject(appended.problems);
        },
        (failure) => {
          if (!signal.aborted) reject([`replan failed: ${messageOf(failure)}`]);
        },
      )
      .catch((failure) => {
        active.failure ??= { error: failure };
        active.controller.abort();
      })
      .finally(() => {
        active.pendingReplans--;
        if (this.#active === active) this.#schedule();
      });
  }

  #settleIfDone(): void {
    const active = this.#active;
    if (!active || this.#running.size > 0) return;
    const aborted = active.controller.signal.aborted;
    if (!aborted && active.pendingReplans > 0) return;
    this.#active = undefined;
    active.detach();
    if (active.failure) active.done.reject(active.failure.error);
    else active.done.resolve({ state: this.state, cancelled: aborted, replans: this.#replans });
  }
}

/**
 * What a run becomes when `run()` starts: WAITING, keeping the calls of an attempt that was
 * interrupted (RUNNING: tern was killed; WAITING: cancelled); undefined when it stays as it is
 * (SUCCEEDED, or WAITING already).
 */
function resetRun(run: NodeRun | undefined): NodeRun | undefined {
  if (run?.state === "SUCCEEDED") return undefined;
  const interrupted = run?.state === "RUNNING" || run?.state === "WAITING";
  const reset: NodeRun = {
    state: "WAITING",
    ...(interrupted ? startedCalls(run.calls ?? [], run.moreCalls ?? false) : {}),
  };
  const same = run !== undefined && JSON.stringify(run) === JSON.stringify(reset);
  return same ? undefined : reset;
}

/** The `calls` and `moreCalls` fields of a run, absent when there are none. */
function startedCalls(calls: readonly string[], more: boolean): Partial<NodeRun> {
  return {
    ...(calls.length > 0 ? { calls: [...calls] } : {}),
    ...(more ? { moreCalls: true } : {}),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
