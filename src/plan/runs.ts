/**
 * A plan's runs, by node id. The ids are the model's text, and `{}` inherits members named like
 * ids (`constructor`, `toString`, `__proto__`…): so a map of runs has no prototype, and a run is
 * read only as an own property. A state copied (`structuredClone`, JSON) has a prototype again;
 * {@linkcode runOf} reads it safely all the same.
 */
import type { NodeRun, PlanState } from "./types.ts";

/** A map of runs without a prototype, holding `entries` (a later one replaces an earlier). */
export function runMap(
  entries: Iterable<readonly [string, NodeRun]> = [],
): Record<string, NodeRun> {
  const runs: Record<string, NodeRun> = Object.create(null);
  for (const [id, run] of entries) runs[id] = run;
  return runs;
}

/**
 * Node `id`'s run in `state`; undefined when it has none. Never a member every object inherits,
 * and never throws (a state read from a damaged session may lack its runs).
 */
export function runOf(state: Pick<PlanState, "runs">, id: string): NodeRun | undefined {
  const runs: unknown = state.runs;
  if (typeof runs !== "object" || runs === null || !Object.hasOwn(runs, id)) return undefined;
  return (runs as Record<string, NodeRun>)[id];
}

/**
 * One run for each of `state`'s nodes, in a map without a prototype: its recorded run, or
 * WAITING when it has none. Runs of ids that are no node's are dropped, so the runs and the
 * nodes always agree.
 */
export function runsOfNodes(state: Pick<PlanState, "nodes" | "runs">): Record<string, NodeRun> {
  return runMap(
    state.nodes.map((node): [string, NodeRun] => [
      node.id,
      runOf(state, node.id) ?? { state: "WAITING" },
    ]),
  );
}
