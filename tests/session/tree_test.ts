import { deepEqual, equal, throws } from "node:assert/strict";
import { SessionTree } from "../../src/session/tree.ts";
import type { SessionEntry } from "../../src/session/types.ts";

function mode(id: string, parentId: string | null): SessionEntry {
  return { type: "mode", id, parentId, timestamp: "2026-11-30T03:08:37.123Z", mode: id };
}

function label(id: string, parentId: string | null, targetId: string, text: string): SessionEntry {
  return { type: "label", id, parentId, timestamp: "t", targetId, label: text };
}

const ids = (entries: readonly SessionEntry[]) => entries.map((entry) => entry.id);

Deno.test("SessionTree indexes branches: get, children, roots, leaf and path", () => {
  // a ─ b ─ c
  // └─ d (branch) ─ e ─ g (the last entry: the leaf)
  // f (a second root)
  const entries = [
    mode("a", null),
    mode("b", "a"),
    mode("c", "b"),
    { type: "branch", id: "d", parentId: "a", timestamp: "t", fromId: "c" } as SessionEntry,
    mode("e", "d"),
    mode("f", null),
    mode("g", "e"),
  ];
  const tree = new SessionTree(entries);
  deepEqual(tree.warnings, []);
  equal(tree.size, 7);
  equal(tree.leafId, "g");
  deepEqual(ids(tree.roots), ["a", "f"]);
  deepEqual(ids(tree.children("a")), ["b", "d"]);
  deepEqual(ids(tree.children("c")), []);
  deepEqual(ids(tree.children("unknown")), []);
  equal(tree.get("d"), entries[3]);
  equal(tree.get("zz"), undefined);
  equal(tree.parentOf("e"), "d");
  equal(tree.parentOf("f"), null);
  deepEqual(ids(tree.path()), ["a", "d", "e", "g"]);
  deepEqual(ids(tree.path("c")), ["a", "b", "c"]);
  deepEqual(ids(tree.path("f")), ["f"]);
  throws(() => tree.path("zz"), RangeError);
});

Deno.test("SessionTree of no entries has no leaf and an empty path", () => {
  const tree = new SessionTree([]);
  equal(tree.leafId, null);
  deepEqual(tree.path(), []);
  deepEqual(tree.path(null), []);
  deepEqual(tree.roots, []);
});

Deno.test("SessionTree roots an entry whose parent is missing, later or itself", () => {
  const entries = [
    mode("a", "gone"),
    mode("b", "c"),
    mode("c", "b"),
    mode("d", "d"),
    mode("e", "c"),
  ];
  const tree = new SessionTree(entries);
  deepEqual(ids(tree.roots), ["a", "b", "d"]);
  deepEqual(tree.warnings, [
    'Entry "a" has parent "gone", which is not an earlier entry: read as a root',
    'Entry "b" has parent "c", which is not an earlier entry: read as a root',
    'Entry "d" has parent "d", which is not an earlier entry: read as a root',
  ]);
  // b ← c ← e is a chain now, not a cycle: every walk ends.
  deepEqual(ids(tree.path()), ["b", "c", "e"]);
  deepEqual(ids(tree.path("d")), ["d"]);
  equal(tree.parentOf("b"), null);
});

Deno.test("SessionTree ignores a repeated id with a warning", () => {
  const first = mode("a", null);
  const tree = new SessionTree([first, mode("b", "a"), mode("a", "b")]);
  equal(tree.get("a"), first);
  equal(tree.leafId, "b");
  deepEqual(tree.warnings, ['Entry id "a" occurs again: the later entry is ignored']);
});

Deno.test("SessionTree.labels keeps the latest label of each entry and drops emptied ones", () => {
  const tree = new SessionTree([
    mode("a", null),
    label("l1", "a", "a", "start"),
    label("l2", "l1", "a", "beginning"),
    label("l3", "l2", "l1", "meta"),
    label("l4", "l3", "l1", ""),
  ]);
  deepEqual([...tree.labels], [["a", "beginning"]]);
});
