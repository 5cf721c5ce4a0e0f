/**
 * The checkpoint store (src/harness/rewind/shadow_store.ts) against real git: a store opened
 * anew (a new process, a new session) gives the workspace's tree whether or not anything
 * changed since the index it starts from was written.
 */
import { deepEqual, equal, notEqual } from "node:assert/strict";
import { join } from "node:path";
import { ShadowStore } from "../../src/harness/rewind/shadow_store.ts";

async function withWorkspace(fn: (ws: string, gitDir: string) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_shadow_" }));
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    await fn(ws, join(root, "store"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

const open = (gitDir: string, ws: string, indexName: string) =>
  ShadowStore.open(gitDir, ws, { indexName, maxFileBytes: 1024 * 1024 });

Deno.test("ShadowStore.snapshot() of a store opened anew: the same tree when nothing changed", async () => {
  await withWorkspace(async (ws, gitDir) => {
    await Deno.writeTextFile(join(ws, "a.txt"), "one\n");
    await Deno.mkdir(join(ws, "src"));
    await Deno.writeTextFile(join(ws, "src", "b.ts"), "export const b = 1;\n");
    const first = await (await open(gitDir, ws, "s1")).snapshot();
    // Same index again, and a new session's index seeded from it.
    const again = await (await open(gitDir, ws, "s1")).snapshot();
    const seeded = await (await open(gitDir, ws, "s2")).snapshot();
    deepEqual([again.tree, seeded.tree], [first.tree, first.tree]);
  });
});

Deno.test("ShadowStore.snapshot() of a store opened anew: a change since its index shows", async () => {
  await withWorkspace(async (ws, gitDir) => {
    await Deno.writeTextFile(join(ws, "a.txt"), "one\n");
    await Deno.writeTextFile(join(ws, "gone.txt"), "bye\n");
    const first = await (await open(gitDir, ws, "s1")).snapshot();
    await Deno.writeTextFile(join(ws, "a.txt"), "one, and longer\n");
    await Deno.remove(join(ws, "gone.txt"));
    await Deno.writeTextFile(join(ws, "new.txt"), "hi\n");
    const store = await open(gitDir, ws, "s2");
    const later = await store.snapshot();
    notEqual(later.tree, first.tree);
    const changes = await store.changes(first.tree, later.tree);
    deepEqual(changes.map((c) => [c.path, c.status]), [
      ["a.txt", "modified"],
      ["gone.txt", "deleted"],
      ["new.txt", "added"],
    ]);
    // And the next snapshot of the same store, nothing changed, reuses the tree.
    equal((await store.snapshot()).tree, later.tree);
  });
});
