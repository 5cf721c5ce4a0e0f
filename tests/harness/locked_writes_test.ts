import { deepEqual, equal } from "node:assert/strict";
import { lockedWrites } from "../../src/harness/locked_writes.ts";
import { PathLocks } from "../../src/plan/path_locks.ts";
import type { Tool } from "../../src/tools/define.ts";
import { builtinTools } from "../../src/tools/mod.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";

/** A tool that records when calls overlap, finishing when the test lets it. */
function slowTool(name: string, log: string[]): Tool {
  return {
    name,
    description: name,
    readOnly: name === "read",
    runsIn: "worker",
    paths: (args) => {
      const path = (args as { path?: unknown } | null)?.path;
      return Promise.resolve(typeof path === "string" ? [{ path, write: name !== "read" }] : []);
    },
    parameters: {},
    async run(args) {
      const path = (args as { path: string }).path;
      log.push(`start ${name} ${path}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      log.push(`end ${name} ${path}`);
      return { status: "SUCCEEDED", output: "" };
    },
  };
}

Deno.test("lockedWrites() never lets two writes of one file overlap; other files and reads go on", async () => {
  const log: string[] = [];
  const locks = new PathLocks();
  const tools = lockedWrites(
    new ToolRegistry(["write", "edit", "read"].map((name) => slowTool(name, log))),
    "/ws",
    (path, run) => locks.withLock(path, run),
  );
  const ctx = { workspace: "/ws", signal: new AbortController().signal };
  await Promise.all([
    tools.get("write")!.run({ path: "a.txt" }, ctx),
    tools.get("edit")!.run({ path: "/ws/a.txt" }, ctx),
    tools.get("write")!.run({ path: "b.txt" }, ctx),
  ]);
  // The edit of a.txt (the same file by its absolute path) waited for the write to end.
  equal(log.indexOf("start edit /ws/a.txt") > log.indexOf("end write a.txt"), true, log.join());
  // b.txt did not wait for a.txt.
  equal(log.indexOf("start write b.txt") < log.indexOf("end write a.txt"), true, log.join());
  deepEqual(tools.names, ["write", "edit", "read"]);
  equal(tools.get("read")!.readOnly, true);
});

Deno.test("lockedWrites() takes one lock for a file and a symlink to it", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-locks-" }));
  try {
    await Deno.writeTextFile(`${dir}/a.txt`, "");
    await Deno.symlink(`${dir}/a.txt`, `${dir}/link.txt`);
    const log: string[] = [];
    const locks = new PathLocks();
    const tools = lockedWrites(
      new ToolRegistry(["write", "edit"].map((name) => slowTool(name, log))),
      dir,
      (path, run) => locks.withLock(path, run),
    );
    const ctx = { workspace: dir, signal: new AbortController().signal };
    await Promise.all([
      tools.get("write")!.run({ path: "link.txt" }, ctx),
      tools.get("edit")!.run({ path: "a.txt" }, ctx),
    ]);
    equal(log.indexOf("start edit a.txt") > log.indexOf("end write link.txt"), true, log.join());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("lockedWrites() locks the file a built-in multi_edit writes, from its declaration alone", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-locks-" }));
  try {
    await Deno.writeTextFile(`${dir}/a.txt`, "one\n");
    const locks = new PathLocks();
    const waiting: string[] = [];
    const tools = lockedWrites(new ToolRegistry(builtinTools()), dir, (path, run) => {
      waiting.push(path);
      return locks.withLock(path, run);
    });
    const ctx = { workspace: dir, signal: new AbortController().signal };
    // Another node holds the file's lock.
    const { promise: released, resolve: release } = Promise.withResolvers<void>();
    const held = locks.withLock(`${dir}/a.txt`, () => released);
    const call = tools.get("multi_edit")!.run({
      path: "a.txt",
      edits: [{ old_string: "one", new_string: "1" }],
    }, ctx);
    let settled = false;
    call.finally(() => settled = true);
    // Until the call asks for a lock, or ends without one.
    while (waiting.length === 0 && !settled) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    deepEqual(waiting, [`${dir}/a.txt`]);
    // The call waits at the lock: the file is as the other node left it.
    equal(await Deno.readTextFile(`${dir}/a.txt`), "one\n");
    release();
    await held;
    equal((await call).status, "SUCCEEDED");
    equal(await Deno.readTextFile(`${dir}/a.txt`), "1\n");
    // Reads take no lock.
    equal((await tools.get("read")!.run({ path: "a.txt" }, ctx)).status, "SUCCEEDED");
    deepEqual(waiting, [`${dir}/a.txt`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
