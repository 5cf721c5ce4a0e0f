/**
 * The entries of a session as a tree linked by `parentId`. A parent must come earlier in the
 * file than its child, so a `parentId` that names a missing, later or the same entry makes that
 * entry a root (with a warning): the tree never has a cycle and every walk ends.
 */
import type { SessionEntry } from "./types.ts";

const NO_CHILDREN: readonly SessionEntry[] = Object.freeze([]);

/** An index over a session's entries: by id, by parent, the leaf and the labels. */
export class SessionTree {
  /** Problems found while building (bad parent links, repeated ids), for a person to see. */
  readonly warnings: string[] = [];
  /** The current position: the last entry in file order, or null when there is none. */
  readonly leafId: string | null = null;
  /** Entries without a (usable) parent, in file order. */
  readonly roots: readonly SessionEntry[];
  /** Label text by the labelled entry's id; the latest label wins and "" removes it. */
  readonly labels: ReadonlyMap<string, string>;

  readonly #byId = new Map<string, SessionEntry>();
  /** The parent each entry is filed under (null for roots), after the checks above. */
  readonly #parentOf = new Map<string, string | null>();
  readonly #children = new Map<string, SessionEntry[]>();

  /** Builds the tree from `entries` in file order (as `loadSession` returns them). */
  constructor(entries: readonly SessionEntry[]) {
    const roots: SessionEntry[] = [];
    const labels = new Map<string, string>();
    for (const entry of entries) {
      if (this.#byId.has(entry.id)) {
        this.warnings.push(`Entry id "${entry.id}" occurs again: the later entry is ignored`);
        continue;
      }
      let parentId = entry.parentId;
      if (parentId !== null && !this.#byId.has(parentId)) {
        this.warnings.push(
          `Entry "${entry.id}" has parent "${parentId}", which is not an earlier entry: ` +
            "read as a root",
        );
        parentId = null;
      }
      this.#byId.set(entry.id, entry);
      this.#parentOf.set(entry.id, parentId);
      if (parentId === null) {
        roots.push(entry);
      } else {
        const siblings = this.#children.get(parentId);
        if (siblings) siblings.push(entry);
        else this.#children.set(parentId, [entry]);
      }
      if (entry.type === "label") {
        if (entry.label === "") labels.delete(entry.targetId);
        else labels.set(entry.targetId, entry.label);
      }
      this.leafId = entry.id;
    }
    this.roots = roots;
    this.labels = labels;
  }

  /** The number of entries in the tree. */
  get size(): number {
    return this.#byId.size;
  }

  /** The entry with `id`, or undefined. */
  get(id: string): SessionEntry | undefined {
    return this.#byId.get(id);
  }

  /** The parent `id` is filed under: null for a root, undefined for an unknown id. */
  parentOf(id: string): string | null | undefined {
    return this.#parentOf.get(id);
  }

  /** The entries directly under `id`, in file order (empty for a leaf or an unknown id). */
  children(id: string): readonly SessionEntry[] {
    return this.#children.get(id) ?? NO_CHILDREN;
  }

  /**
   * The entries from the root down to `id` (default: the leaf), both included; empty when `id`
   * is null. @throws {RangeError} when `id` is not in the tree.
   */
  path(id: string | null = this.leafId): SessionEntry[] {
    if (id === null) return [];
    if (!this.#byId.has(id)) throw new RangeError(`Cannot find entry "${id}" in the session`);
    const path: SessionEntry[] = [];
    for (let at: string | null = id; at !== null; at = this.#parentOf.get(at) ?? null) {
      path.push(this.#byId.get(at)!);
    }
    return path.reverse();
  }
}

/**
 * The entries from `id` back to its root through `parentId`, `id` first, each read with
 * `get`. Stops at a missing parent and at an id met before, so links that form a cycle in a
 * damaged file (an entry its own parent, or a later entry's) still end the walk. Walks over
 * the links as read (`Session`, memory consolidation) go through here; `SessionTree` has no
 * cycles to guard against, and the reader from a file's end (`tail.ts`) keeps its own guard.
 */
export function* ancestors(
  get: (id: string) => SessionEntry | undefined,
  id: string | null,
): Generator<SessionEntry> {
  const seen = new Set<string>();
  for (let at = id; at !== null && !seen.has(at);) {
    const entry = get(at);
    if (entry === undefined) return;
    seen.add(at);
    yield entry;
    at = entry.parentId;
  }
}
