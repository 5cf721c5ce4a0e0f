/**
 * indexWorkspace() on bad input (issue 22, part 7): each case leaves a usable index and says
 * what happened. The read-only home and the full disk are real: a tmpfs mounted read-only or
 * small (skipped unless this process may mount, as root may).
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { indexWorkspace, refreshFiles } from "../../src/harness/code_index.ts";
import { IndexStore } from "../../src/index/store.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { indexed, withWorkspace, write } from "./_workspace.ts";

function symbols(file: string, query: string): string[] {
  const { store } = IndexStore.open(file);
  try {
    return store.search(query).map((hit) => hit.chunk.symbol);
  } finally {
    store.close();
  }
}

/** Whether this process can mount a tmpfs (root in a namespace that allows it). */
function canMount(): boolean {
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) return false;
  const dir = Deno.makeTempDirSync({ prefix: "tern-mount-probe-" });
  try {
    const mounted = new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
    if (mounted) new Deno.Command("umount", { args: [dir] }).outputSync();
    return mounted;
  } catch {
    return false;
  } finally {
    Deno.removeSync(dir);
  }
}

const MOUNT = canMount();

async function run(command: string, ...args: string[]): Promise<void> {
  const output = await new Deno.Command(command, { args, stdout: "null", stderr: "piped" })
    .output();
  if (!output.success) {
    throw new Error(`${command} ${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`);
  }
}

/** Runs `body` with a tmpfs of `size` mounted at `dir` (`ro` remounts it read-only first). */
async function withTmpfs(
  dir: string,
  size: string,
  body: (remountReadOnly: () => Promise<void>) => Promise<void>,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await run("mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir);
  try {
    await body(() => run("mount", "-o", "remount,ro", dir));
  } finally {
    await run("umount", dir);
  }
}

Deno.test("indexWorkspace() counts binary and huge files, keeps unparsable source, indexes the rest", async () => {
  await withWorkspace({
    "src/ok.ts": "export function tallyVotes() { return 1; }\n",
    "src/broken.ts": "export function halfDone( {{{ ((( class\n",
    "logo.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]),
    "huge.txt": "tallyVotes\n".repeat(110_000),
  }, async (workspace, home) => {
    const file = join(home, "index.sqlite");
    const summary = await indexWorkspace(workspace, file);
    equal(summary.indexed, 2);
    equal(summary.binary, 1);
    equal(summary.tooLarge, 1);
    deepEqual(indexed(file), ["src/broken.ts", "src/ok.ts"]);
    ok(symbols(file, "tallyVotes").includes("tallyVotes"));
    ok(symbols(file, "halfDone").length > 0, "the unparsable file is still searchable");
  });
});

Deno.test("indexWorkspace() skips a file deleted while it is indexed and drops its old entry", async () => {
  await withWorkspace({
    "a.ts": "export function first() {}\n",
    "b.ts": "export function second() {}\n",
    "c.ts": "export function third() {}\n",
  }, async (workspace, home) => {
    const file = join(home, "index.sqlite");
    await indexWorkspace(workspace, file);
    deepEqual(indexed(file), ["a.ts", "b.ts", "c.ts"]);
    await Deno.writeTextFile(join(workspace, "b.ts"), "export function secondChanged() {}\n");
    // b.ts goes away after the walk found it and before it is read.
    const summary = await indexWorkspace(workspace, file, {
      onFile: (path) => {
        if (path === "b.ts") Deno.removeSync(join(workspace, "b.ts"));
      },
    });
    equal(summary.removed, 1);
    deepEqual(indexed(file), ["a.ts", "c.ts"]);
  });
});

Deno.test("indexWorkspace() re-reads a file whose stamp changed and skips one whose stamp did not", async () => {
  await withWorkspace({ "a.ts": "export function alpha() {}\n" }, async (workspace, home) => {
    const file = join(home, "index.sqlite");
    const path = join(workspace, "a.ts");
    const old = new Date(Date.now() - 60_000);
    await Deno.utime(path, old, old);
    equal((await indexWorkspace(workspace, file)).indexed, 1);
    // Same size, same time, other content: trusted stamp, not read (what the stamp is for).
    await Deno.writeTextFile(path, "export function gamma() {}\n");
    await Deno.utime(path, old, old);
    const same = await indexWorkspace(workspace, file);
    deepEqual([same.indexed, same.unchanged], [0, 1]);
    // Another time: read, hashed and re-chunked.
    const later = new Date(Date.now() - 30_000);
    await Deno.utime(path, later, later);
    equal((await indexWorkspace(workspace, file)).indexed, 1);
    ok(symbols(file, "gamma").includes("gamma"));
  });
});

Deno.test("indexWorkspace() re-hashes a file whose time is not safely past even when its stamp looks the same", async () => {
  await withWorkspace({ "a.ts": "export function alpha() {}\n" }, async (workspace, home) => {
    const file = join(home, "index.sqlite");
    const path = join(workspace, "a.ts");
    // Ahead of the clock: never older than the racy window, however slow this machine is.
    const now = new Date(Date.now() + 3_600_000);
    await Deno.utime(path, now, now);
    equal((await indexWorkspace(workspace, file)).indexed, 1);
    await Deno.writeTextFile(path, "export function gamma() {}\n");
    await Deno.utime(path, now, now);
    equal((await indexWorkspace(workspace, file)).indexed, 1);
  });
});

Deno.test("refreshFiles() brings only the given files up to date, as a full run would", async () => {
  await withWorkspace({
    ".gitignore": "build/\n",
    "a.ts": "export function alpha() {}\n",
    "b.ts": "export function beta() {}\n",
    "untouched.ts": "export function kept() {}\n",
  }, async (workspace, home) => {
    const file = join(home, "index.sqlite");
    await indexWorkspace(workspace, file);
    await Deno.writeTextFile(join(workspace, "a.ts"), "export function alphaTwo() {}\n");
    await Deno.remove(join(workspace, "b.ts"));
    await write(join(workspace, "c.ts"), "export function gamma() {}\n");
    await write(join(workspace, "build/out.ts"), "export function built() {}\n");
    // A file no refresh names stays as it was indexed, even when it changed.
    await Deno.writeTextFile(join(workspace, "untouched.ts"), "export function changed() {}\n");
    const summary = await refreshFiles(workspace, file, [
      "a.ts",
      "b.ts",
      "c.ts",
      "build/out.ts",
      "../outside.ts",
      "a.ts",
    ]);
    deepEqual([summary.indexed, summary.removed], [2, 1]);
    deepEqual(indexed(file), [".gitignore", "a.ts", "c.ts", "untouched.ts"]);
    ok(symbols(file, "alphaTwo").includes("alphaTwo"));
    ok(symbols(file, "kept").includes("kept"));
  });
});

Deno.test("indexWorkspace() that changes nothing runs while another connection holds the write lock", async () => {
  await withWorkspace({ "a.ts": "export function alpha() {}\n" }, async (workspace, home) => {
    const file = join(home, "index.sqlite");
    const old = new Date(Date.now() - 60_000);
    await Deno.utime(join(workspace, "a.ts"), old, old);
    await indexWorkspace(workspace, file);
    const holder = new DatabaseSync(file);
    holder.exec("PRAGMA busy_timeout = 0");
    holder.exec("BEGIN IMMEDIATE");
    try {
      const summary = await indexWorkspace(workspace, file);
      deepEqual([summary.unchanged, summary.indexed, summary.removed], [1, 0, 0]);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
  });
});

Deno.test("tern index where the index cannot be created prints the file and the fix, not a stack", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, "a.ts"), "export function alpha() {}\n");
    // The index folder's place is taken by a file: nothing can be created under it.
    await Deno.writeTextFile(join(ws.home, "index"), "");
    const run = await runTern(["index"], { cwd: ws.dir, env: { TERN_HOME: ws.home } });
    equal(run.code, 1);
    match(run.stderr, /^tern: Cannot create the code index ".*\/index\/[^"]+\.sqlite": /);
    match(run.stderr, /or set TERN_HOME to a folder that is/);
    ok(!run.stderr.includes("internal error"), run.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test({
  name: "indexWorkspace() on a read-only home names the index file and the fix",
  ignore: !MOUNT,
  fn: async () => {
    await withWorkspace({ "a.ts": "export function alpha() {}\n" }, async (workspace, home) => {
      await withTmpfs(home, "1m", async (remountReadOnly) => {
        await remountReadOnly();
        const file = join(home, "index", "ws.sqlite");
        await rejects(indexWorkspace(workspace, file), (error: Error) => {
          match(error.message, /^Cannot create the code index ".*\/index\/ws\.sqlite": /);
          match(error.message, /Read-only file system/);
          match(error.message, /set TERN_HOME to a folder that is/);
          return true;
        });
      });
    });
  },
});

Deno.test({
  name: "indexWorkspace() on a full disk says so and the index keeps its last committed state",
  ignore: !MOUNT,
  fn: async () => {
    await withWorkspace({ "a.ts": "export function alpha() {}\n" }, async (workspace, home) => {
      await withTmpfs(home, "400k", async () => {
        const file = join(home, "index.sqlite");
        equal((await indexWorkspace(workspace, file)).indexed, 1);
        // Many files of distinct words: more index than the disk holds.
        for (let i = 0; i < 60; i++) {
          const words = Array.from({ length: 2_000 }, (_, j) => `word${i}x${j}`).join(" ");
          await Deno.writeTextFile(join(workspace, `n${i}.txt`), words);
        }
        await rejects(indexWorkspace(workspace, file), (error: Error) => {
          match(error.message, /^Cannot write the code index ".*index\.sqlite": /);
          match(error.message, /disk is full/);
          match(error.message, /It keeps the files written before/);
          return true;
        });
        const after = indexed(file);
        ok(after.includes("a.ts"), "the file indexed before is still there");
        ok(symbols(file, "alpha").includes("alpha"));
      });
    });
  },
});
