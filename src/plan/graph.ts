/**
 * The task graph's rules: its JSON shape (zod), its validity (unique ids, known dependencies, no
 * self-dependency, no cycle, no key tern knows of as an id), an order to run it in, and appending
 * to it. Pure functions; every rejection names the ids involved (but never a key), because the
 * message goes back to the model for its one corrective retry.
 */
import * as z from "../core/zod.ts";
import { PlanValidationError } from "./errors.ts";
import type { PlanNode } from "./types.ts";

/** The most nodes a plan has: {@linkcode parsePlan} and {@linkcode appendNodes} accept no more. */
export const MAX_PLAN_NODES = 50;

/**
 * The most characters of a node's title and task. A planner's whole answer is a few thousand
 * tokens; a model that writes megabytes would have them shown, recorded as one session line (one
 * past the session reader's 64 MiB would leave the plan nothing to resume from) and sent to every
 * worker.
 */
export const MAX_TITLE_CHARS = 200;
export const MAX_TASK_CHARS = 20_000;

/** The most characters of an id a problem quotes: more than an id may have, so a bad one shows. */
const QUOTED_CHARS = 60;

/** The most unknown keys one problem quotes; the rest are counted. */
const QUOTED_KEYS = 5;

const ID_RULE = 'must be 1 to 40 letters, digits, "_" or "-"';

const nodeSchema = z.strictObject({
  id: z.string({ error: `"id" ${ID_RULE}` }).regex(/^[A-Za-z0-9_-]{1,40}$/, {
    error: `"id" ${ID_RULE}`,
  }),
  title: z.string({ error: '"title" must be a non-empty string' }).trim().min(1, {
    error: '"title" must be a non-empty string',
  }).max(MAX_TITLE_CHARS, {
    error: `"title" must be at most ${MAX_TITLE_CHARS} characters: a few words`,
  }),
  task: z.string({ error: '"task" must be a non-empty string' }).trim().min(1, {
    error: '"task" must be a non-empty string',
  }).max(MAX_TASK_CHARS, { error: `"task" must be at most ${MAX_TASK_CHARS} characters` }),
  // A node may depend on every other one at most: a longer list is refused by its length,
  // before its entries are compared one by one (a model may send hundreds of thousands).
  dependsOn: z.array(z.string({ error: '"dependsOn" must list node ids (strings)' }), {
    error: '"dependsOn" must be an array of node ids',
  }).max(MAX_PLAN_NODES - 1, {
    error: (issue) => {
      const count = Array.isArray(issue.input) ? `${issue.input.length} ids` : "too many ids";
      return `"dependsOn" has ${count}: a node depends on at most ${MAX_PLAN_NODES - 1} others`;
    },
  }).default([]),
}, { error: 'must be an object {"id", "title", "task", "dependsOn"}' });

const planSchema = z.strictObject({
  nodes: z.array(nodeSchema, { error: '"nodes" must be an array of nodes' })
    .min(1, { error: '"nodes" is empty: a plan needs at least one node' })
    .max(MAX_PLAN_NODES, {
      error: (issue) => {
        const count = Array.isArray(issue.input) ? `${issue.input.length} nodes` : "too many nodes";
        return `"nodes" has ${count}: a plan has at most ${MAX_PLAN_NODES}`;
      },
    }),
}, { error: 'the plan must be a JSON object {"nodes": [...]}' });

/** What {@linkcode parsePlan} and {@linkcode appendNodes} check besides the graph's rules. */
export interface PlanCheckOptions {
  /**
   * Masks the keys tern knows of in a text (the conversation's masker). A node whose id or
   * dependency it changes holds a key: rejected, without quoting it ({@linkcode secretProblems}),
   * and every problem passes through it, so none quotes a key.
   */
  mask?: (text: string) => string;
}

/**
 * Parses `{nodes:[{id, title, task, dependsOn}]}`: unknown keys are rejected, ids match
 * `/^[A-Za-z0-9_-]{1,40}$/`, title and task are non-empty (trimmed) strings of at most
 * {@linkcode MAX_TITLE_CHARS} and {@linkcode MAX_TASK_CHARS} characters, `dependsOn` defaults to `[]` and lists at most `MAX_PLAN_NODES - 1` ids, and there are 1 to {@linkcode MAX_PLAN_NODES} nodes. Then, with
 * `options.mask`, no id or dependency holds a key ({@linkcode secretProblems}), and the graph
 * validates ({@linkcode validatePlan}).
 * @throws {PlanValidationError} listing every shape problem, or else every key problem, or else
 *   every graph problem
 */
export function parsePlan(value: unknown, options: PlanCheckOptions = {}): PlanNode[] {
  const mask = options.mask ?? ((text: string) => text);
  const parsed = planSchema.safeParse(value);
  if (!parsed.success) {
    throw new PlanValidationError(shapeProblems(parsed.error, value, "node", mask).map(mask));
  }
  const secret = secretProblems(parsed.data.nodes, mask);
  // Never spread into push(): a list of problems that long overflows the call stack.
  const problems = secret.length > 0 ? secret : validatePlan(parsed.data.nodes);
  if (problems.length > 0) throw new PlanValidationError(problems.map(mask));
  return parsed.data.nodes;
}

/**
 * One problem for each node whose id, and one for each whose `dependsOn`, `mask` changes: it
 * holds a key. Node ids are shown and recorded as written, and a session masks the values it
 * keeps but not the names of an object's members, so a key as an id would be shown and would
 * split the plan's records. No problem quotes such an id. `label` names a node (`node 2`).
 */
export function secretProblems(
  nodes: readonly PlanNode[],
  mask: (text: string) => string,
  label = "node",
): string[] {
  const problems: string[] = [];
  nodes.forEach((node, index) => {
    const secretId = mask(node.id) !== node.id;
    const where = `${label} ${index + 1}${secretId ? "" : ` (${JSON.stringify(cut(node.id))})`}`;
    const known = "a key tern knows of, which is never shown";
    if (secretId) problems.push(`${where}: "id" holds ${known}: name the node in plain words`);
    if (node.dependsOn.some((dep) => mask(dep) !== dep)) {
      problems.push(`${where}: "dependsOn" holds ${known}: list node ids only`);
    }
  });
  return problems;
}

/**
 * Every problem of the graph, `[]` when it is valid: duplicate ids (`duplicate id "a"`),
 * self-dependencies (`"a" depends on itself`), repeated dependencies (`"b" depends on "a"
 * twice`), unknown dependencies (`"b" depends on unknown "x"`) and cycles with their path
 * (`cycle: a → b → c → a`, each arrow read "depends on", starting at the cycle's earliest node).
 * Each cycle is reported once; the order of problems is deterministic (the nodes' order).
 */
export function validatePlan(nodes: readonly PlanNode[]): string[] {
  const problems: string[] = [];
  const byId = new Map<string, PlanNode>();
  const reported = new Set<string>();
  for (const node of nodes) {
    if (!byId.has(node.id)) byId.set(node.id, node);
    else if (!reported.has(node.id)) {
      reported.add(node.id);
      problems.push(`duplicate id ${named(node.id)}`);
    }
  }
  for (const node of nodes) {
    const seen = new Set<string>();
    for (const dep of node.dependsOn) {
      if (seen.has(dep)) {
        problems.push(`${named(node.id)} depends on ${named(dep)} twice`);
        continue;
      }
      seen.add(dep);
      if (dep === node.id) problems.push(`${named(node.id)} depends on itself`);
      else if (!byId.has(dep)) problems.push(`${named(node.id)} depends on unknown ${named(dep)}`);
    }
  }
  for (const cycle of findCycles(byId)) {
    problems.push(`cycle: ${cycle.map((id) => cut(id)).join(" → ")}`);
  }
  return problems;
}

/**
 * The ids in an order where every node comes after its dependencies; among nodes ready at the
 * same point, the nodes' own order decides. Assumes a valid graph ({@linkcode validatePlan}).
 */
export function topologicalOrder(nodes: readonly PlanNode[]): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  const left = [...nodes];
  while (left.length > 0) {
    const index = left.findIndex((node) => node.dependsOn.every((dep) => placed.has(dep)));
    if (index === -1) throw new PlanValidationError(validatePlan(nodes));
    const [node] = left.splice(index, 1);
    placed.add(node.id);
    order.push(node.id);
  }
  return order;
}

/**
 * `existing` plus `added` (copied; title and task trimmed) if every added node has the shape
 * {@linkcode parsePlan} accepts, the whole graph has at most {@linkcode MAX_PLAN_NODES} nodes,
 * with `options.mask` no added id or dependency holds a key, and the graph validates. Added nodes
 * may depend on existing ones; an added id equal to an existing id is a duplicate.
 * @throws {PlanValidationError} and changes nothing otherwise
 */
export function appendNodes(
  existing: readonly PlanNode[],
  added: readonly PlanNode[],
  options: PlanCheckOptions = {},
): PlanNode[] {
  const mask = options.mask ?? ((text: string) => text);
  const parsed = z.array(nodeSchema).safeParse(added);
  if (!parsed.success) {
    throw new PlanValidationError(shapeProblems(parsed.error, added, "added node", mask).map(mask));
  }
  const total = existing.length + parsed.data.length;
  if (total > MAX_PLAN_NODES) {
    // Checked here, not only by parsePlan: a replan or an --append must not grow a plan past it.
    throw new PlanValidationError([
      `adding ${parsed.data.length} nodes to ${existing.length} makes ${total}: ` +
      `a plan has at most ${MAX_PLAN_NODES}`,
    ]);
  }
  const secret = secretProblems(parsed.data, mask, "added node");
  if (secret.length > 0) throw new PlanValidationError(secret);
  const nodes = [...existing.map(copyNode), ...parsed.data];
  const problems = validatePlan(nodes);
  if (problems.length > 0) throw new PlanValidationError(problems.map(mask));
  return nodes;
}

function copyNode(node: PlanNode): PlanNode {
  return { id: node.id, title: node.title, task: node.task, dependsOn: [...node.dependsOn] };
}

/**
 * One cycle per back edge of a depth-first search in the nodes' order (self-loops excluded).
 * Iterative, with a stack of its own: a long chain of nodes (an append the person or the
 * replanner wrote) cannot overflow the call stack.
 */
function findCycles(byId: ReadonlyMap<string, PlanNode>): string[][] {
  const cycles: string[][] = [];
  const keys = new Set<string>();
  const position = new Map([...byId.keys()].map((id, index) => [id, index]));
  const done = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const frames: Array<{ id: string; deps: Iterator<string> }> = [];
  const enter = (id: string) => {
    stack.push(id);
    onStack.add(id);
    frames.push({ id, deps: new Set(byId.get(id)?.dependsOn ?? []).values() });
  };
  for (const root of byId.keys()) {
    if (done.has(root)) continue;
    enter(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      const next = frame.deps.next();
      if (next.done) {
        frames.pop();
        stack.pop();
        onStack.delete(frame.id);
        done.add(frame.id);
        continue;
      }
      const dep = next.value;
      if (dep === frame.id || !byId.has(dep) || done.has(dep)) continue;
      if (onStack.has(dep)) {
        const cycle = rotateToEarliest(stack.slice(stack.indexOf(dep)), position);
        const key = cycle.join("\n");
        if (!keys.has(key)) {
          keys.add(key);
          cycles.push([...cycle, cycle[0]]);
        }
      } else enter(dep);
    }
  }
  return cycles;
}

function rotateToEarliest(cycle: string[], position: ReadonlyMap<string, number>): string[] {
  let start = 0;
  cycle.forEach((id, index) => {
    if (position.get(id)! < position.get(cycle[start])!) start = index;
  });
  return [...cycle.slice(start), ...cycle.slice(0, start)];
}

/**
 * Zod issues as problems that say where (`node 2 ("b")`) and what is expected. An id or a key
 * quoted is masked before it is cut: the cut part of a key is one no masker knows.
 */
function shapeProblems(
  error: z.ZodError,
  root: unknown,
  label: string,
  mask: (text: string) => string,
): string[] {
  const nodes = label === "node" ? valueAt(root, ["nodes"]) : root;
  const depth = label === "node" ? 1 : 0;
  return error.issues.map((issue) => {
    const index = issue.path[depth];
    let where = "";
    if (typeof index === "number") {
      const id = valueAt(nodes, [index, "id"]);
      const shown = typeof id === "string" && id !== ""
        ? ` (${JSON.stringify(cut(mask(id)))})`
        : "";
      where = `${label} ${index + 1}${shown}: `;
    }
    if (issue.code !== "unrecognized_keys") return `${where}${issue.message}`;
    // The model's keys, quoted as ids are: a few, each cut (one answer may hold thousands).
    const more = issue.keys.length - QUOTED_KEYS;
    const keys = issue.keys.slice(0, QUOTED_KEYS).map((key) => JSON.stringify(cut(mask(key))))
      .join(", ") + (more > 0 ? ` and ${more} more` : "");
    const allowed = where === ""
      ? 'the plan has only "nodes"'
      : 'a node has "id", "title", "task" and "dependsOn"';
    return `${where}unknown key(s) ${keys} (${allowed})`;
  });
}

/**
 * An id or a dependency as a problem quotes it: in quotes, cut after {@linkcode QUOTED_CHARS}
 * characters (the model's text may be a megabyte long, and problems are shown and sent back to it).
 */
function named(id: string): string {
  return `"${cut(id)}"`;
}

function cut(id: string): string {
  const chars = [...id.slice(0, 2 * (QUOTED_CHARS + 1))];
  return chars.length > QUOTED_CHARS ? `${chars.slice(0, QUOTED_CHARS).join("")}…` : id;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
