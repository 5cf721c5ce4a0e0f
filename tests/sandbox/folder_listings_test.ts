/**
 * The `.git` search's kept readings (src/sandbox/folder_listings.ts): the same answer as a
 * search without them, folders read again exactly when they may have changed.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { FolderListings, SETTLED_MS } from "../../src/sandbox/folder_listings.ts";
import { gitDirsUnder } from "../../src/sandbox/protected_paths.ts";

/** A clock far enough ahead that every folder made by the test counts as settled. */
const settledClock = () => Date.now() + 10 * SETTLED_MS;

async function withTree(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "tern-listings-" });
  try {
    for (
      const dir of [
        ".git",
        "src/lib",
        "vendor/tool/.git",
        "app/node_modules/dep/node_modules/inner/.git",
        "app/node_modules/@scope/pkg",
        "app/node_modules/.pnpm/x@1.0.0/node_modules/x/.git",
      ]
    ) await Deno.mkdir(join(root, dir), { recursive: true });
    await Deno.writeTextFile(join(root, "src/lib/a.ts"), "export {};\n");
    await fn(await Deno.realPath(root));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Waits until the clock is in the next second: a change made then has a new ctime. */
async function nextSecond(): Promise<void> {
  await new Promise((done) => setTimeout(done, 1_050 - (Date.now() % 1_000)));
}

Deno.test("gitDirsUnder() with kept readings answers as without, and reads unchanged folders once", async () => {
  await withTree(async (root) => {
    const cache = new FolderListings({ now: settledClock });
    const plain = await gitDirsUnder([root]);
    deepEqual(await gitDirsUnder([root], { cache }), plain);
    const reads = cache.reads;
    ok(reads > 10, `only ${reads} readings`);
    deepEqual(await gitDirsUnder([root], { cache }), plain);
    equal(cache.reads, reads, "a folder that did not change was read again");
    deepEqual(plain, [
      join(root, ".git"),
      join(root, "app/node_modules/.pnpm/x@1.0.0/node_modules/x/.git"),
      join(root, "app/node_modules/dep/node_modules/inner/.git"),
      join(root, "vendor/tool/.git"),
    ]);
  });
});

Deno.test("gitDirsUnder() with kept readings finds a repository made later in a kept folder or package", async () => {
  await withTree(async (root) => {
    const cache = new FolderListings({ now: settledClock });
    await gitDirsUnder([root], { cache });
    await nextSecond();
    await Deno.mkdir(join(root, "src/lib/.git"));
    await Deno.mkdir(join(root, "app/node_modules/@scope/pkg/.git"));
    // A package that gains its own node_modules, with a repository in it.
    await Deno.mkdir(join(root, "app/node_modules/dep/node_modules/inner/node_modules/z/.git"), {
      recursive: true,
    });
    const found = await gitDirsUnder([root], { cache });
    deepEqual(found, await gitDirsUnder([root]));
    for (
      const repo of [
        "src/lib/.git",
        "app/node_modules/@scope/pkg/.git",
        "app/node_modules/dep/node_modules/inner/node_modules/z/.git",
      ]
    ) ok(found.includes(join(root, repo)), `${repo} not found in ${found}`);
  });
});

Deno.test("gitDirsUnder() with kept readings finds a repository in a folder swapped for another", async () => {
  await withTree(async (root) => {
    const cache = new FolderListings({ now: settledClock });
    await Deno.mkdir(join(root, "spare/.git"), { recursive: true });
    await Deno.mkdir(join(root, "other"));
    await gitDirsUnder([root], { cache });
    // Moved into a folder whose own listing does not change, in the same second.
    await Deno.rename(join(root, "src/lib"), join(root, "other/lib"));
    await Deno.rename(join(root, "spare"), join(root, "src/lib"));
    await Deno.remove(join(root, "other/lib"), { recursive: true });
    ok((await gitDirsUnder([root], { cache })).includes(join(root, "src/lib/.git")));
  });
});

Deno.test("FolderListings keeps no reading of a folder that changed shortly before it", async () => {
  await withTree(async (root) => {
    // The real clock: every folder was made a moment ago, so a change in the same second
    // (which keeps its ctime, in whole seconds) must not go unseen.
    const cache = new FolderListings();
    await gitDirsUnder([root], { cache });
    const first = cache.reads;
    await Deno.mkdir(join(root, "src/lib/.git"));
    ok((await gitDirsUnder([root], { cache })).includes(join(root, "src/lib/.git")));
    equal(cache.reads, 2 * first, "a folder changed a moment ago was not read again");
  });
});
