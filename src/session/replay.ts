/**
 * Replay: the state a session is in at one entry, rebuilt from the path root → entry. The
 * context the model sees honours compactions (summary + what they kept) and branch summaries;
 * settings (model, thinking level, mode, profile) are the last ones set on the path; permission
 * changes accumulate in order. Entries of unknown type are skipped.
 */
import { addUsage, emptyUsage, type Message } from "../core/messages.ts";
import type { ContextItem } from "../context/compaction_types.ts";
import { summaryMessage } from "../context/summary.ts";
import { closeDanglingCalls } from "./dangling.ts";
import { isPermissionChange } from "./_entry_shape.ts";
import type { Checkpoint, SessionEntry } from "./types.ts";

export interface ReplayState extends Checkpoint {
  /**
   * The conversation for the model (without the system prompt), each item tied to its entry.
   * Always well formed: a tool call that has no result (tern was killed while it ran) is closed
   * with an "interrupted" observation (dangling.ts).
   */
  items: ContextItem[];
}

/** Rebuilds the state at the end of `path` (entries root → leaf, as `SessionTree.path` gives). */
export function replay(path: readonly SessionEntry[]): ReplayState {
  const replayer = new Replayer();
  for (const entry of path) replayer.apply(entry);
  return replayer.state();
}

/**
 * Replay one entry at a time: `apply()` each entry of a path in order, `state()` whenever the
 * state at the last one is needed. An open session keeps one and feeds it what it appends, so
 * asking for the state never walks the path again.
 */
export class Replayer {
  /**
   * The conversation so far: `#store` from `#from` on. A compaction moves `#from` and puts its
   * summary in the slot before what it keeps instead of copying what it keeps, so replaying a
   * path costs the same however much each compaction on it keeps (a file whose every
   * compaction kept everything before took minutes to show).
   */
  #store: ContextItem[] = [];
  #from = 0;
  /** Each item's index in `#store`; a slot is reused, so the item there is checked. */
  #at = new Map<string, number>();
  /** The plan's records (the checkpoint's `plan`, kept out of `#settings`). */
  #plan = new PlanRecords();
  #settings: Checkpoint = {
    permissions: [],
    usage: emptyUsage(),
    fallbacks: [],
    compactions: 0,
  };

  /** Takes in the next entry of the path. */
  apply(entry: SessionEntry): void {
    const settings = this.#settings;
    switch (entry.type) {
      case "message":
        this.#push({ id: entry.id, message: entry.message });
        if (entry.usage) settings.usage = addUsage(settings.usage, entry.usage);
        if (entry.cost !== undefined) settings.cost = (settings.cost ?? 0) + entry.cost;
        if (typeof entry.saved === "number") settings.saved = (settings.saved ?? 0) + entry.saved;
        break;
      case "model":
        if (entry.cause === "fallback") {
          settings.fallbacks.push(`${entry.provider ?? "?"}/${entry.model}`);
          break;
        }
        settings.model = entry.model;
        settings.provider = entry.provider;
        break;
      case "thinking":
        settings.thinking = entry.level;
        break;
      case "mode":
        settings.mode = entry.mode;
        break;
      case "profile":
        settings.profile = entry.profile;
        break;
      case "permission":
        settings.permissions.push(entry.change);
        break;
      case "compaction": {
        this.#compact(
          { id: entry.id, message: summaryMessage(entry.summary) },
          entry.firstKeptId === null ? undefined : this.#indexOf(entry.firstKeptId),
        );
        // The checkpoint is what the path before said; taking it makes what follows the
        // compaction independent of that path, which is what lets a resume skip reading it.
        if (isCheckpoint(entry.checkpoint)) {
          this.#settings = copyCheckpoint(entry.checkpoint);
          this.#plan.start(this.#settings.plan);
          delete this.#settings.plan;
        }
        this.#settings.compactions++;
        break;
      }
      case "pins":
        if (isStringList(entry.pins) && entry.pins.length > 0) settings.pins = [...entry.pins];
        else delete settings.pins;
        break;
      case "plan":
        if (startsPlan(entry.data)) this.#plan.start([entry.data]);
        else this.#plan.add(entry.data);
        break;
      case "branch":
        if (entry.summary) {
          this.#push({ id: entry.id, message: branchSummaryMessage(entry.summary) });
        }
        break;
      default:
        // Labels, subagent links, and types from newer versions: not context.
        break;
    }
  }

  /** The settings so far, as a compaction appended now records them. */
  checkpoint(): Checkpoint {
    const checkpoint = copyCheckpoint(this.#settings);
    const plan = this.#plan.records();
    if (plan !== undefined) checkpoint.plan = plan;
    return checkpoint;
  }

  /** The state after the entries applied so far: a copy the caller may change. */
  state(): ReplayState {
    return { items: closeDanglingCalls(this.#store.slice(this.#from)), ...this.checkpoint() };
  }

  #push(item: ContextItem): void {
    const at = this.#store.push(item) - 1;
    if (this.#indexOf(item.id) === undefined) this.#at.set(item.id, at);
  }

  /** Where the first item with `id` is in `#store`; undefined when none is in the conversation. */
  #indexOf(id: string): number | undefined {
    const at = this.#at.get(id);
    return at !== undefined && at >= this.#from && this.#store[at].id === id ? at : undefined;
  }

  /** `summary` in place of the items before index `kept` (all of them when undefined). */
  #compact(summary: ContextItem, kept: number | undefined): void {
    if (kept === undefined) {
      this.#store = [];
      this.#from = 0;
      this.#at.clear();
      this.#push(summary);
      return;
    }
    if (kept === 0) {
      // No slot before the first item: room for as many summaries as there are items.
      const items = this.#store.slice(this.#from);
      this.#relayout([...new Array<ContextItem>(Math.max(8, items.length)), ...items]);
      kept = this.#from;
    }
    this.#from = kept - 1;
    this.#store[this.#from] = summary;
    this.#at.set(summary.id, this.#from);
    // What lies before is dropped once it is most of the store.
    if (this.#from > 1024 && this.#from * 2 > this.#store.length) {
      this.#relayout(this.#store.slice(this.#from));
    }
  }

  /** Makes `store` (empty slots, then the conversation) the store, indexing it again. */
  #relayout(store: ContextItem[]): void {
    this.#store = store;
    this.#from = store.findIndex((item) => item !== undefined);
    if (this.#from === -1) this.#from = store.length;
    this.#at.clear();
    for (let at = this.#from; at < store.length; at++) {
      if (!this.#at.has(store[at].id)) this.#at.set(store[at].id, at);
    }
  }
}

/**
 * A plan's records as replay keeps them: only a node's newest record counts (src/plan/record.ts),
 * so a record of a node takes the place of those before it, and the checkpoint holds a record per
 * node and per append, however often the nodes changed. A record replaced is marked, not
 * filtered out, so each record costs the same however many nodes the plan has (a file of 10,000
 * node records took 13 seconds to show).
 */
class PlanRecords {
  /** The records in order, those replaced marked {@linkcode REPLACED}; undefined: no plan. */
  #log: unknown[] | undefined;
  /** Where each node's records are in `#log`. */
  #byNode = new Map<string, number[]>();

  /** A new plan with `records` (none when undefined). */
  start(records: readonly unknown[] | undefined): void {
    this.#log = undefined;
    this.#byNode.clear();
    if (records === undefined) return;
    this.#log = [];
    for (const data of records) this.#append(data);
  }

  /** A record after those so far; nothing without a plan. */
  add(data: unknown): void {
    if (this.#log === undefined) return;
    const node = nodeOf(data);
    if (node !== undefined) {
      for (const at of this.#byNode.get(node) ?? []) this.#log[at] = REPLACED;
      this.#byNode.delete(node);
    }
    this.#append(data);
  }

  /** The records that count, in order; undefined when there is no plan. */
  records(): unknown[] | undefined {
    return this.#log?.filter((data) => data !== REPLACED);
  }

  #append(data: unknown): void {
    const at = this.#log!.push(data) - 1;
    const node = nodeOf(data);
    if (node === undefined) return;
    const records = this.#byNode.get(node);
    if (records) records.push(at);
    else this.#byNode.set(node, [at]);
  }
}

const REPLACED: unique symbol = Symbol("replaced");

/** A copy of `checkpoint` that shares nothing changeable with it (fields left out stay out). */
function copyCheckpoint(checkpoint: Checkpoint): Checkpoint {
  const copy: Checkpoint = {
    ...checkpoint,
    permissions: [...checkpoint.permissions],
    usage: { ...checkpoint.usage },
    fallbacks: [...checkpoint.fallbacks],
  };
  if (checkpoint.pins !== undefined) copy.pins = [...checkpoint.pins];
  if (checkpoint.plan !== undefined) copy.plan = [...checkpoint.plan];
  // As it reads back from the file, where JSON leaves undefined fields out.
  for (
    const key of [
      "model",
      "provider",
      "thinking",
      "mode",
      "profile",
      "cost",
      "saved",
    ] as const
  ) {
    if (copy[key] === undefined) delete copy[key];
  }
  return copy;
}

/**
 * True when `value` has a checkpoint's shape, each permission change and plan record the shape
 * its own entry must have (a damaged one would reach the gate as a grant without paths). One
 * read from a file is used only then, both by replay and by the resume that skips to it, so a
 * malformed one cannot make them differ.
 */
export function isCheckpoint(value: unknown): value is Checkpoint {
  if (typeof value !== "object" || value === null) return false;
  const c = value as Record<string, unknown>;
  const optionalString = (key: string) => c[key] === undefined || typeof c[key] === "string";
  const usage = c.usage as Record<string, unknown> | null;
  return ["model", "provider", "thinking", "mode", "profile"].every(optionalString) &&
    Array.isArray(c.permissions) &&
    c.permissions.every(isPermissionChange) &&
    typeof usage === "object" && usage !== null &&
    ["inputTokens", "outputTokens", "cachedTokens", "reasoningTokens"].every((key) =>
      typeof usage[key] === "number"
    ) &&
    (c.cost === undefined || typeof c.cost === "number") &&
    (c.saved === undefined || typeof c.saved === "number") &&
    Array.isArray(c.fallbacks) && c.fallbacks.every((f) => typeof f === "string") &&
    typeof c.compactions === "number" &&
    (c.pins === undefined || isStringList(c.pins)) &&
    (c.plan === undefined ||
      Array.isArray(c.plan) && c.plan.every((data) => typeof data === "object" && data !== null));
}

/** A `plan` entry's data that starts a plan (`{kind: "plan", …}`, src/plan/record.ts). */
function startsPlan(data: unknown): boolean {
  return typeof data === "object" && data !== null && (data as { kind?: unknown }).kind === "plan";
}

/** The plan and node a `plan` entry's data changes (`{kind: "node", planId, nodeId, …}`). */
function nodeOf(data: unknown): string | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const { kind, planId, nodeId } = data as Record<string, unknown>;
  if (kind !== "node" || typeof planId !== "string" || typeof nodeId !== "string") return undefined;
  return JSON.stringify([planId, nodeId]);
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** How a summary of an abandoned branch reads to the model. */
export function branchSummaryMessage(summary: string): Message {
  return {
    role: "user",
    content: "[Note from tern] Earlier work on another branch of this session was set aside. " +
      `What was done there:\n\n${summary}`,
  };
}
