/**
 * The checkpoint store (src/harness/rewind/shadow_store.ts) against real git: a store opened
 * anew (a new process, a new session) gives the workspace's tree whether or not anything
 * changed since the index it starts from was written.
 */
import { deepEqual, equal, notEqual, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import {
  MAX_NESTED_REPOSITORIES,
  ShadowStore,
  THROWAWAY_STALE_MS,
} from "../../src/harness/rewind/shadow_store.ts";

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

Deno.test("ShadowStore.open() keeps the newest 16 session indexes, never a lock, and seeds from the newest", async () => {
  await withWorkspace(async (ws, gitDir) => {
    await Deno.writeTextFile(join(ws, "a.txt"), "one\n");
    const first = await (await open(gitDir, ws, "s0")).snapshot();
    for (let n = 1; n < 20; n++) {
      await Deno.copyFile(join(gitDir, "index-s0"), join(gitDir, `index-s${n}`));
    }
    // s19 the newest, s0 the oldest; a lock older than all of them.
    for (let n = 0; n < 20; n++) {
      const time = new Date(Date.UTC(2026, 0, 1, 0, n));
      await Deno.utime(join(gitDir, `index-s${n}`), time, time);
    }
    await Deno.writeTextFile(join(gitDir, "index-s3.lock"), "");
    await Deno.utime(join(gitDir, "index-s3.lock"), new Date(0), new Date(0));
    const seeded = await open(gitDir, ws, "fresh");
    const names: string[] = [];
    for await (const entry of Deno.readDir(gitDir)) {
      if (entry.name.startsWith("index-")) names.push(entry.name);
    }
    const kept = Array.from({ length: 16 }, (_, i) => `index-s${i + 4}`);
    deepEqual(names.sort(), ["index-fresh", "index-s3.lock", ...kept].sort());
    // The new session's index is a copy of the newest, with its time.
    const [newest, copy] = await Promise.all(
      ["index-s19", "index-fresh"].map((name) => Deno.stat(join(gitDir, name))),
    );
    equal(copy.mtime?.getTime(), newest.mtime?.getTime());
    equal((await seeded.snapshot()).tree, first.tree);
  });
});

Deno.test("ShadowStore.snapshot() takes in the files of a repository nested in the workspace", async () => {
  // git lists a folder holding its own .git as one entry ("sub/"), never its files: a change
  // there went into no checkpoint, and a rewind left it as it was without saying so.
  await withWorkspace(async (ws, gitDir) => {
    await Deno.mkdir(join(ws, "sub", "src"), { recursive: true });
    const init = await new Deno.Command("git", { args: ["init", "-q", join(ws, "sub")] }).output();
    ok(init.success);
    await Deno.writeTextFile(join(ws, "sub", "y.txt"), "one\n");
    await Deno.writeTextFile(join(ws, "sub", "src", "z.ts"), "export {};\n");
    const store = await open(gitDir, ws, "s1");
    const first = await store.snapshot();
    await Deno.writeTextFile(join(ws, "sub", "y.txt"), "two\n");
    await Deno.writeTextFile(join(ws, "sub", "new.txt"), "hi\n");
    await Deno.remove(join(ws, "sub", "src", "z.ts"));
    const later = await store.snapshot();
    const changes = await store.changes(first.tree, later.tree);
    deepEqual(changes.map((c) => [c.path, c.status]), [
      ["sub/new.txt", "added"],
      ["sub/src/z.ts", "deleted"],
      ["sub/y.txt", "modified"],
    ]);
    // Nothing changed: the same tree, and nothing of the nested repository is read again.
    equal((await store.snapshot()).tree, later.tree);
    // The nested repository's own .git is no file of the workspace's.
    ok(!changes.some((c) => c.path.includes(".git/")));
    const y = changes.find((c) => c.path === "sub/y.txt")!;
    equal(new TextDecoder().decode(await store.blob(y.newId)), "two\n");
  });
});

Deno.test("ShadowStore.patch() of more paths than one command line holds asks for them in parts", async () => {
  await withWorkspace(async (ws, gitDir) => {
    // 1,100 paths of about 2,270 bytes: 2.5 MB of names, past what one exec may pass (2 MiB).
    const folder = join(...Array.from({ length: 9 }, (_, i) => String(i).repeat(250)));
    await Deno.mkdir(join(ws, folder), { recursive: true });
    const store = await open(gitDir, ws, "s1");
    const before = await store.snapshot();
    const paths: string[] = [];
    for (let i = 0; i < 1100; i++) {
      const path = join(folder, `f${String(i).padStart(5, "0")}.txt`);
      await Deno.writeTextFile(join(ws, path), `line ${i}\n`);
      paths.push(path);
    }
    const after = await store.snapshot();
    const patch = await store.patch(before.tree, after.tree, 64 * 1024 * 1024, paths);
    ok(patch.includes("+line 0\n"), "the first part's diff");
    ok(patch.includes("+line 1099\n"), "the last part's diff");
    equal(patch.match(/^\+line /gm)?.length, 1100);
    // Cut at the limit all the same.
    const cut = await store.patch(before.tree, after.tree, 1000, paths);
    ok(cut.endsWith("… (diff cut at 1000 bytes)\n"), cut.slice(-80));
    equal(await store.patch(before.tree, after.tree, 1000, []), "");
  });
});

Deno.test("ShadowStore.blobs() reads many blobs in order, binary and empty ones whole", async () => {
  await withWorkspace(async (ws, gitDir) => {
    const store = await open(gitDir, ws, "s1");
    const empty = await store.snapshot();
    const binary = new Uint8Array([0, 10, 255, 13, 10, 0]);
    await Deno.writeFile(join(ws, "bin.dat"), binary);
    await Deno.writeTextFile(join(ws, "empty.txt"), "");
    // More than one batch of files.
    for (let i = 0; i < 600; i++) await Deno.writeTextFile(join(ws, `f${i}`), `file ${i}\n`);
    const changes = (await store.changes(empty.tree, (await store.snapshot()).tree)).reverse();
    equal(changes.length, 602);
    const contents = await store.blobs(changes.map((change) => change.newId));
    const decoder = new TextDecoder();
    for (const [i, change] of changes.entries()) {
      if (change.path === "bin.dat") deepEqual(contents[i], binary);
      else if (change.path === "empty.txt") equal(contents[i].length, 0);
      else equal(decoder.decode(contents[i]), `file ${change.path.slice(1)}\n`, change.path);
    }
    await rejects(
      () => store.blobs(["0".repeat(40)]),
      /Cannot read blob "0{40}": not in the store/,
    );
  });
});

Deno.test("ShadowStore.snapshot() fails, naming the store, once rewritten files could take it past its limit", async () => {
  await withWorkspace(async (ws, gitDir) => {
    /** 40 KB that compress to nothing less: new content on every call. */
    const rewrite = () =>
      Deno.writeFile(join(ws, "build.bin"), crypto.getRandomValues(new Uint8Array(40_000)));
    await rewrite();
    const options = { indexName: "s1", maxFileBytes: 1024 * 1024, maxStoreBytes: 100_000 };
    const store = await ShadowStore.open(gitDir, ws, options);
    await store.snapshot();
    await rewrite();
    await store.snapshot();
    // A third copy could take the store (which keeps every snapshot's content) past 100 KB.
    await rewrite();
    await rejects(
      store.snapshot(),
      new RegExp(
        `^TernError: Cannot checkpoint the workspace: its checkpoint store holds 0\\.\\d MiB, ` +
          `and the 0\\.0 MiB changed since the last checkpoint could take it past 0\\.1 MiB; ` +
          `remove "${gitDir}" to start it afresh`,
      ),
    );
    // A store opened anew measures what it holds: the limit holds across runs.
    const reopened = await ShadowStore.open(gitDir, ws, { ...options, indexName: "s2" });
    await rejects(reopened.snapshot(), /could take it past/);
  });
});

/** Makes a FIFO at `path` with the system's mkfifo. */
async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  equal(made.code, 0, new TextDecoder().decode(made.stderr));
}

Deno.test("ShadowStore.snapshot() is not stalled by FIFOs named .gitignore or .gitattributes", async () => {
  await withWorkspace(async (ws, gitDir) => {
    await Deno.writeTextFile(join(ws, ".gitignore"), "ignored.txt\n");
    await Deno.writeTextFile(join(ws, "a.txt"), "one\n");
    // Short enough that git waiting on a FIFO to its timeout fails the snapshot.
    const store = await ShadowStore.open(gitDir, ws, {
      indexName: "s1",
      maxFileBytes: 1024 * 1024,
      timeoutMs: 8_000,
    });
    const first = await store.snapshot();
    await Deno.mkdir(join(ws, "sub"));
    await mkfifo(join(ws, "sub", ".gitignore"));
    await mkfifo(join(ws, ".gitattributes"));
    await Deno.writeTextFile(join(ws, "sub", "b.txt"), "two\n");
    await Deno.writeTextFile(join(ws, "ignored.txt"), "still ignored\n");
    const second = await store.snapshot();
    deepEqual((await store.changes(first.tree, second.tree)).map((c) => [c.path, c.status]), [
      ["sub/b.txt", "added"],
    ]);
    // The FIFOs known, the next snapshot does not wait to find them; a tracked .gitignore
    // turned into one is gone from the checkpoint, as no file git can store.
    await Deno.remove(join(ws, ".gitignore"));
    await mkfifo(join(ws, ".gitignore"));
    await Deno.writeTextFile(join(ws, "a.txt"), "changed\n");
    const third = await store.snapshot();
    deepEqual((await store.changes(second.tree, third.tree)).map((c) => [c.path, c.status]), [
      [".gitignore", "deleted"],
      ["a.txt", "modified"],
      ["ignored.txt", "added"],
    ]);
  });
});

Deno.test("ShadowStore.snapshot() refuses, naming them, more FIFOs than it releases", async () => {
  await withWorkspace(async (ws, gitDir) => {
    for (let i = 0; i < 33; i++) {
      await Deno.mkdir(join(ws, `d${i}`));
      await mkfifo(join(ws, `d${i}`, ".gitignore"));
      await mkfifo(join(ws, `d${i}`, ".gitattributes"));
    }
    const store = await ShadowStore.open(gitDir, ws, {
      indexName: "s1",
      maxFileBytes: 1024 * 1024,
      timeoutMs: 20_000,
    });
    await rejects(store.snapshot(), /it holds 66 FIFOs named \.gitignore or \.gitattributes/);
  });
});

/** Runs git in `cwd` (the test's own, on a repository it made). */
async function git(cwd: string, ...args: string[]): Promise<void> {
  const run = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  equal(run.code, 0, new TextDecoder().decode(run.stderr));
}

Deno.test("ShadowStore.snapshot() takes in files the project tracks although they are ignored", async () => {
  await withWorkspace(async (ws, gitDir) => {
    await git(ws, "init", "-q");
    await Deno.writeTextFile(join(ws, ".gitignore"), "*.local\nbuild/\n");
    await Deno.writeTextFile(join(ws, "app.local"), "tracked anyway\n");
    await Deno.mkdir(join(ws, "build"));
    await Deno.writeTextFile(join(ws, "build", "keep.txt"), "tracked too\n");
    await Deno.writeTextFile(join(ws, "build", "out.bin"), "ignored\n");
    await Deno.writeTextFile(join(ws, "other.local"), "ignored\n");
    await git(ws, "add", ".gitignore");
    await git(ws, "add", "-f", "app.local", "build/keep.txt");
    await git(ws, "commit", "-q", "-m", "init");
    const store = await open(gitDir, ws, "s1");
    const first = await store.snapshot();
    const stored = new Deno.Command("/usr/bin/git", {
      args: ["--git-dir", gitDir, "ls-tree", "-r", "--name-only", first.tree],
      stdout: "piped",
    }).outputSync();
    deepEqual(new TextDecoder().decode(stored.stdout).trim().split("\n").sort(), [
      ".gitignore",
      "app.local",
      "build/keep.txt",
    ]);
    // Known now: a command's change to one is in the next checkpoint, in this process or the next.
    await Deno.writeTextFile(join(ws, "app.local"), "changed by a command\n");
    const second = await store.snapshot();
    deepEqual((await store.changes(first.tree, second.tree)).map((c) => [c.path, c.status]), [
      ["app.local", "modified"],
    ]);
    await Deno.writeTextFile(join(ws, "build", "keep.txt"), "changed as well\n");
    const anew = await (await open(gitDir, ws, "s1")).snapshot();
    deepEqual((await store.changes(second.tree, anew.tree)).map((c) => [c.path, c.status]), [
      ["build/keep.txt", "modified"],
    ]);
  });
});

Deno.test("ShadowStore.snapshot() released from a FIFO .gitattributes mid-update leaves no lock behind", async () => {
  await withWorkspace(async (ws, gitDir) => {
    const store = await ShadowStore.open(gitDir, ws, {
      indexName: "s1",
      maxFileBytes: 1024 * 1024,
      timeoutMs: 8_000,
    });
    await store.snapshot();
    // Only update-index (which holds the index's lock) reads attributes: it waits here.
    await mkfifo(join(ws, ".gitattributes"));
    await Deno.writeTextFile(join(ws, "a.txt"), "one\n");
    const second = await store.snapshot();
    await Deno.writeTextFile(join(ws, "b.txt"), "two\n");
    const third = await store.snapshot();
    deepEqual((await store.changes(second.tree, third.tree)).map((c) => [c.path, c.status]), [
      ["b.txt", "added"],
    ]);
  });
});

Deno.test("ShadowStore.open() with a throwaway index removes those a killed process left, not fresh ones", async () => {
  await withWorkspace(async (ws, gitDir) => {
    await Deno.writeTextFile(join(ws, "a.txt"), "one\n");
    await (await open(gitDir, ws, "s1")).snapshot();
    const hourAgo = Date.now() - THROWAWAY_STALE_MS - 60_000;
    const left = [`throwaway-index-${hourAgo}-0a1b`, `throwaway-index-${hourAgo}-0a1b.lock`];
    const fresh = `throwaway-index-${Date.now() - 10_000}-2c3d`;
    for (const name of [...left, fresh]) await Deno.writeTextFile(join(gitDir, name), "x");
    const store = await ShadowStore.open(gitDir, ws, {
      indexName: "s1",
      maxFileBytes: 1024 * 1024,
      throwawayIndex: "copy",
    });
    const snapshot = await store.snapshot();
    ok(snapshot.tree.length > 0);
    const names = () => [...Deno.readDirSync(gitDir)].map((e) => e.name);
    // Its own index is there while it is open, named as the sweep reads it.
    ok(
      names().some((n) => /^throwaway-index-\d+-[0-9a-f-]+$/.test(n) && n !== fresh),
      names().join(),
    );
    store.discard();
    deepEqual(names().filter((n) => n.startsWith("throwaway-index-")), [fresh]);
  });
});

Deno.test("ShadowStore.open() seeds from the newest index that holds entries, not an empty one", async () => {
  await withWorkspace(async (ws, gitDir) => {
    await Deno.writeTextFile(join(ws, "a.txt"), "one\n");
    const first = await (await open(gitDir, ws, "s0")).snapshot();
    // A run that ended before its first snapshot left an index with no entries, newer than s0.
    const empty = new Uint8Array(32);
    empty.set(new TextEncoder().encode("DIRC"));
    new DataView(empty.buffer).setUint32(4, 2);
    await Deno.writeFile(join(gitDir, "index-ended-early"), empty);
    const old = new Date(Date.UTC(2026, 0, 1));
    await Deno.utime(join(gitDir, "index-s0"), old, old);
    const seeded = await open(gitDir, ws, "fresh");
    deepEqual(
      await Deno.readFile(join(gitDir, "index-fresh")),
      await Deno.readFile(join(gitDir, "index-s0")),
    );
    equal((await seeded.snapshot()).tree, first.tree);
  });
});

Deno.test("ShadowStore.snapshot() stores more files than one git command takes in steps: the same trees as in one", async () => {
  await withWorkspace(async (ws, gitDir) => {
    for (let i = 0; i < 10; i++) {
      await Deno.mkdir(join(ws, `d${i % 3}`), { recursive: true });
      await Deno.writeTextFile(join(ws, `d${i % 3}`, `f${i}.txt`), `${i}\n`);
    }
    await Deno.writeTextFile(join(ws, "was-file"), "a file\n");
    const stepped = await ShadowStore.open(gitDir, ws, {
      indexName: "s1",
      maxFileBytes: 1024 * 1024,
      stepFiles: 3,
    });
    const whole = await ShadowStore.open(`${gitDir}-whole`, ws, {
      indexName: "s1",
      maxFileBytes: 1024 * 1024,
    });
    const trees = async () => [(await stepped.snapshot()).tree, (await whole.snapshot()).tree];
    const [first, firstWhole] = await trees();
    equal(first, firstWhole);
    const names = async (tree: string) =>
      (await stepped.changes("4b825dc642cb6eb9a060e54bf8d69288fbee4904", tree)).map((c) => c.path)
        .sort();
    equal((await names(first)).length, 11);
    // Changes across several steps: removals, new files, a file that became a folder.
    for (let i = 0; i < 10; i += 2) await Deno.remove(join(ws, `d${i % 3}`, `f${i}.txt`));
    for (let i = 10; i < 17; i++) await Deno.writeTextFile(join(ws, `new${i}.txt`), `${i}\n`);
    await Deno.remove(join(ws, "was-file"));
    await Deno.mkdir(join(ws, "was-file"));
    await Deno.writeTextFile(join(ws, "was-file", "inside.txt"), "inside\n");
    const [second, secondWhole] = await trees();
    equal(second, secondWhole);
    deepEqual(await names(second), [
      "d0/f3.txt",
      "d0/f9.txt",
      "d1/f1.txt",
      "d1/f7.txt",
      "d2/f5.txt",
      ...Array.from({ length: 7 }, (_, i) => `new${i + 10}.txt`),
      "was-file/inside.txt",
    ]);
  });
});

Deno.test("ShadowStore refuses more nested repositories than it lists, before listing any", async () => {
  await withWorkspace(async (ws, gitDir) => {
    await Deno.writeTextFile(join(ws, "a.txt"), "one\n");
    const store = await open(gitDir, ws, "s1");
    const { tree } = await store.snapshot();
    // What a command can make in a moment: each would cost git runs of its own in the view.
    const count = MAX_NESTED_REPOSITORIES + 1;
    const made = await new Deno.Command("sh", {
      args: ["-c", `for i in $(seq ${count}); do git init -q r$i && echo x > r$i/f; done`],
      cwd: ws,
    }).output();
    equal(made.code, 0);
    await rejects(
      () => store.ignoredSince(tree),
      /Cannot check the workspace's ignored files: more than 64 repositories are nested/,
    );
    await rejects(
      () => open(gitDir, ws, "s2").then((fresh) => fresh.snapshot()),
      /Cannot checkpoint the workspace: more than 64 repositories are nested in the workspace .*\(\.gitignore\)/,
    );
    // Ignored, they are not listed: the checkpoint goes on.
    await Deno.writeTextFile(join(ws, ".gitignore"), "r*/\n");
    const ignored = await (await open(gitDir, ws, "s3")).snapshot();
    notEqual(ignored.tree, tree);
    deepEqual(await store.ignoredSince(ignored.tree), []);
  });
});
