/**
 * Rewinds a security review found fragile: a restore of hundreds of MB (streamed to the restore
 * process, never one string, and that process never left behind), a store index left locked by
 * a killed git, the blocked-folder check walking links and removed folders, trees of empty
 * folders where a file goes back, a project's `* binary` hiding the preview, and setuid bits.
 * Real files, real git and the real restore process throughout.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { CHUNK_BYTES, type RestoreOp, runRestore } from "../../src/harness/rewind/restore_ops.ts";
import { writeFileSafely } from "../../src/harness/rewind/safe_files.ts";
import { ShadowStore } from "../../src/harness/rewind/shadow_store.ts";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import { storeDir } from "../../src/harness/rewind/records.ts";
import { Session } from "../../src/session/session.ts";
import { checkpointedTurn, strictCheckpoints, temp } from "../support/host_tool.ts";

/** The pids of processes whose command line names `text` (from `ps`). */
function processesNaming(text: string): number[] {
  const out = new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const [, pid, args] = line.match(/^\s*(\d+)\s+(.*)$/) ?? [];
    return pid !== undefined && args.includes(text) ? [Number(pid)] : [];
  });
}

function bytesOf(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

Deno.test("runRestore() writes a file larger than one chunk of the request whole", async () => {
  const ws = await temp("tern-restore-chunks-");
  const big = bytesOf(CHUNK_BYTES * 2 + 12345, 7);
  const answer = await runRestore(ws, [
    { op: "write", path: "data/big.bin", data: big, executable: false },
    { op: "write", path: "data/empty.bin", data: new Uint8Array(), executable: true },
    {
      op: "write",
      path: "small.txt",
      data: new TextEncoder().encode("small\n"),
      executable: false,
    },
  ]);
  deepEqual(answer, { done: 3 });
  deepEqual(Deno.readFileSync(join(ws, "data/big.bin")), big);
  equal(Deno.readFileSync(join(ws, "data/empty.bin")).length, 0);
  equal(Deno.statSync(join(ws, "data/empty.bin")).mode! & 0o111, 0o111);
  equal(Deno.readTextFileSync(join(ws, "small.txt")), "small\n");
});

Deno.test(
  "runRestore() stops at a failure to take the next operation, and leaves no process",
  async () => {
    const ws = await temp("tern-restore-fails-");
    async function* ops(): AsyncGenerator<RestoreOp> {
      yield {
        op: "write",
        path: "a.txt",
        data: new TextEncoder().encode("a\n"),
        executable: false,
      };
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new RangeError("Invalid string length");
    }
    const answer = await runRestore(ws, ops());
    deepEqual(answer, { done: 1, error: "Invalid string length" });
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "a\n");
    deepEqual(processesNaming(ws), []);
  },
);

Deno.test(
  "runRestore() answers what the restore did when it stops reading in the middle of a file",
  async () => {
    const ws = await temp("tern-restore-stops-");
    Deno.mkdirSync(join(ws, "big.bin"));
    Deno.writeTextFileSync(join(ws, "big.bin", "kept"), "kept\n");
    const answer = await runRestore(ws, [
      { op: "write", path: "a.txt", data: new TextEncoder().encode("a\n"), executable: false },
      { op: "write", path: "big.bin", data: bytesOf(CHUNK_BYTES * 8, 1), executable: false },
      { op: "write", path: "z.txt", data: new TextEncoder().encode("z\n"), executable: false },
    ]);
    equal(answer.done, 1);
    ok(answer.error?.includes("a folder with files"), answer.error);
    equal(Deno.readTextFileSync(join(ws, "big.bin", "kept")), "kept\n");
    deepEqual([...Deno.readDirSync(ws)].map((entry) => entry.name).sort(), ["a.txt", "big.bin"]);
    deepEqual(processesNaming(ws), []);
  },
);

Deno.test("ShadowStore.eachBlob() reads blobs in order, in batches of a given size", async () => {
  const home = await temp("tern-each-blob-");
  const ws = await temp("tern-each-blob-ws-");
  const contents = [5000, 0, 3000, 9000, 1].map((size, i) => bytesOf(size, i));
  contents.forEach((bytes, i) => Deno.writeFileSync(join(ws, `f${i}`), bytes));
  const store = await ShadowStore.open(join(home, "store"), ws, {
    indexName: "s",
    maxFileBytes: 1 << 20,
  });
  const { tree } = await store.snapshot();
  const ids = (await store.changes("4b825dc642cb6eb9a060e54bf8d69288fbee4904", tree)).map((c) =>
    c.newId
  );
  const read: Uint8Array[] = [];
  for await (const bytes of store.eachBlob([...ids, ids[0]], 4096)) read.push(bytes);
  deepEqual(read, [...contents, contents[0]]);
});

/** A session whose one turn ran `body` over `ws` (holding `files` before); its user entry id. */
async function turnOver(
  ws: string,
  files: Record<string, string>,
  body: () => void,
): Promise<{ session: Session; id: string }> {
  for (const [path, text] of Object.entries(files)) {
    Deno.mkdirSync(join(ws, path, ".."), { recursive: true });
    Deno.writeTextFileSync(join(ws, path), text);
  }
  const home = await temp("tern-review-home-");
  const session = Session.create(home, { cwd: ws, ternVersion: "test" });
  const id = await checkpointedTurn(session, strictCheckpoints(session, ws), body);
  return { session, id };
}

const filesOnly = (ws: string) => ({ workspace: ws, scope: "files" as const, rules: [] });

Deno.test("planRewind() and applyRewind() work past a lock a killed git left on the index", async () => {
  const ws = await temp("tern-review-lock-");
  const { session, id } = await turnOver(ws, { "a.txt": "a\n" }, () => {
    Deno.writeTextFileSync(join(ws, "a.txt"), "changed\n");
  });
  try {
    // As git killed by SIGBUS or the timeout while it held the index leaves it.
    const lock = join(storeDir(join(session.path, "..")), `index-${session.id}.lock`);
    Deno.writeTextFileSync(lock, "");
    const plan = await planRewind(session, id, filesOnly(ws));
    deepEqual(plan.changes.map((change) => change.path), ["a.txt"]);
    const result = await applyRewind(session, plan, filesOnly(ws));
    deepEqual(result.written, ["a.txt"]);
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "a\n");
  } finally {
    session.close();
  }
});

Deno.test("ShadowStore.open() clears an index lock older than any command; a fresh one stays", async () => {
  const home = await temp("tern-review-stale-");
  const ws = await temp("tern-review-stale-ws-");
  Deno.writeTextFileSync(join(ws, "a.txt"), "a\n");
  const gitDir = join(home, "store");
  const options = { indexName: "s", maxFileBytes: 1 << 20, timeoutMs: 2_000 };
  await (await ShadowStore.open(gitDir, ws, options)).snapshot();
  const lock = join(gitDir, "index-s.lock");
  Deno.writeTextFileSync(lock, "");
  const old = new Date(Date.now() - 60_000);
  Deno.utimeSync(lock, old, old);
  Deno.writeTextFileSync(join(ws, "a.txt"), "b\n");
  const store = await ShadowStore.open(gitDir, ws, options);
  ok((await store.snapshot()).tree);
  // A fresh one (another process's, maybe) stays through the failure it causes.
  Deno.writeTextFileSync(lock, "");
  Deno.writeTextFileSync(join(ws, "a.txt"), "c\n");
  const failed = await store.snapshot().then(() => undefined, (error: Error) => error.message);
  ok(failed?.includes("File exists"), failed);
  ok(Deno.lstatSync(lock).isFile);
});

Deno.test("applyRewind() walks no link to find a folder in the way, and skips removed ones", async () => {
  const ws = await temp("tern-review-walk-");
  const outside = await temp("tern-review-outside-");
  Deno.mkdirSync(join(outside, "lib/x.ts"), { recursive: true });
  Deno.writeTextFileSync(join(outside, "lib/x.ts/keep"), "outside\n");
  for (const target of [".cache", outside]) {
    const { session, id } = await turnOver(ws, { "src/lib/x.ts": "orig\n" }, () => {
      Deno.removeSync(join(ws, "src"), { recursive: true });
      if (target === ".cache") {
        Deno.mkdirSync(join(ws, ".cache/lib/x.ts"), { recursive: true });
        Deno.writeTextFileSync(join(ws, ".cache/lib/x.ts/keep"), "cache\n");
        Deno.writeTextFileSync(join(ws, ".gitignore"), ".cache/\n");
      }
      Deno.symlinkSync(target, join(ws, "src"));
    });
    try {
      // Listing where the link leads is the only way to see what is in x.ts there.
      const listed: string[] = [];
      const readDir = Deno.readDir;
      Deno.readDir = (path: string | URL) => {
        listed.push(String(path));
        return readDir(path);
      };
      let result;
      try {
        const plan = await planRewind(session, id, filesOnly(ws));
        result = await applyRewind(session, plan, filesOnly(ws));
      } finally {
        Deno.readDir = readDir;
      }
      ok(result.written.includes("src/lib/x.ts"), target);
      equal(Deno.readTextFileSync(join(ws, "src/lib/x.ts")), "orig\n");
      ok(!Deno.lstatSync(join(ws, "src")).isSymlink);
      deepEqual(listed.filter((path) => path.includes("x.ts")), [], target);
      equal(Deno.readTextFileSync(join(outside, "lib/x.ts/keep")), "outside\n");
    } finally {
      session.close();
      Deno.removeSync(ws, { recursive: true });
      Deno.mkdirSync(ws);
    }
  }
});

Deno.test("applyRewind() replaces a tree of empty folders where a file goes back", async () => {
  const ws = await temp("tern-review-empty-");
  const { session, id } = await turnOver(ws, { "a.txt": "a\n", "src/lib/x.ts": "orig\n" }, () => {
    Deno.writeTextFileSync(join(ws, "a.txt"), "changed\n");
    Deno.removeSync(join(ws, "src/lib/x.ts"));
    Deno.mkdirSync(join(ws, "src/lib/x.ts/empty/deeper"), { recursive: true });
  });
  try {
    const plan = await planRewind(session, id, filesOnly(ws));
    const result = await applyRewind(session, plan, filesOnly(ws));
    deepEqual(result.written.sort(), ["a.txt", "src/lib/x.ts"]);
    equal(Deno.readTextFileSync(join(ws, "src/lib/x.ts")), "orig\n");
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "a\n");
  } finally {
    session.close();
  }
});

Deno.test("planRewind() shows text changes though the workspace says `* binary`", async () => {
  const ws = await temp("tern-review-binary-");
  const { session, id } = await turnOver(ws, { "a.txt": "before\n" }, () => {
    Deno.writeTextFileSync(join(ws, "a.txt"), "after\n");
  });
  try {
    Deno.writeTextFileSync(join(ws, ".gitattributes"), "* binary\n");
    const plan = await planRewind(session, id, filesOnly(ws));
    ok(plan.patch.includes("-after") && plan.patch.includes("+before"), plan.patch);
    ok(!plan.patch.includes("Binary files"), plan.patch);
  } finally {
    session.close();
  }
});

Deno.test("writeFileSafely() keeps no setuid, setgid or sticky bit of the file it replaces", async () => {
  const ws = await temp("tern-review-setuid-");
  Deno.writeTextFileSync(join(ws, "tool"), "old\n");
  Deno.chmodSync(join(ws, "tool"), 0o4755);
  Deno.writeTextFileSync(join(ws, "data"), "old\n");
  Deno.chmodSync(join(ws, "data"), 0o1640);
  await writeFileSafely(ws, "tool", new TextEncoder().encode("new\n"), true);
  await writeFileSafely(ws, "data", new TextEncoder().encode("new\n"), false);
  equal(Deno.statSync(join(ws, "tool")).mode! & 0o7777, 0o755);
  equal(Deno.statSync(join(ws, "data")).mode! & 0o7777, 0o640);
});
