import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createWriteTool } from "../../src/tools/write.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const write = createWriteTool();

async function names(dir: string): Promise<string[]> {
  const all: string[] = [];
  for await (const entry of Deno.readDir(dir)) all.push(entry.name);
  return all.sort();
}

Deno.test("write() creates a file and its parent folders", async () => {
  await withSandbox(async ({ ws }) => {
    const obs = await call(write, ws, { path: "src/deep/new.ts", content: "a\nb\n" });
    equal(succeeded(obs), 'Created "src/deep/new.ts" (4 bytes, 2 lines)');
    equal(await Deno.readTextFile(join(ws, "src/deep/new.ts")), "a\nb\n");
    ok(obs.status === "SUCCEEDED" && obs.details?.kind === "diff");
    ok(obs.details.diff.includes("+a\n+b"), obs.details.diff);
  });
});

Deno.test("write() overwrites atomically, keeps the mode and leaves no temp file", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "run.sh": "echo old\n" });
    await Deno.chmod(join(ws, "run.sh"), 0o751);
    const obs = await call(write, ws, { path: "run.sh", content: "echo new\necho más\n" });
    equal(succeeded(obs), 'Overwrote "run.sh" (19 bytes, 2 lines)');
    equal(await Deno.readTextFile(join(ws, "run.sh")), "echo new\necho más\n");
    equal((await Deno.stat(join(ws, "run.sh"))).mode! & 0o777, 0o751);
    deepEqual(await names(ws), ["run.sh"]);
    ok(obs.status === "SUCCEEDED" && obs.details?.kind === "diff");
    ok(obs.details.diff.includes("-echo old\n+echo new"), obs.details.diff);
  });
});

Deno.test("write() refuses a file with another hard link and changes neither", async () => {
  await withSandbox(async ({ ws, outside }) => {
    const target = join(outside, "shared.txt");
    await Deno.writeTextFile(target, "original\n");
    await Deno.link(target, join(ws, "shared.txt"));
    const message = failed(
      await call(write, ws, { path: "shared.txt", content: "changed\n" }),
      "POLICY_DENIED",
    );
    ok(message.includes("hard links"), message);
    equal(await Deno.readTextFile(target), "original\n");
    equal(await Deno.readTextFile(join(ws, "shared.txt")), "original\n");
  });
});

Deno.test("write() refuses a directory and a path below a file", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "src/a.ts": "a" });
    const dir = failed(await call(write, ws, { path: "src", content: "x" }), "EXECUTION_FAILED");
    ok(dir.includes("directory"), dir);
    const below = failed(
      await call(write, ws, { path: "src/a.ts/b.ts", content: "x" }),
      "EXECUTION_FAILED",
    );
    ok(below.includes("not a directory"), below);
  });
});

Deno.test("write() writes an empty file", async () => {
  await withSandbox(async ({ ws }) => {
    equal(
      succeeded(await call(write, ws, { path: "e", content: "" })),
      'Created "e" (0 bytes, 0 lines)',
    );
    equal(await Deno.readTextFile(join(ws, "e")), "");
  });
});

Deno.test("write() rejects bad arguments without writing", async () => {
  await withSandbox(async ({ ws }) => {
    for (
      const args of [
        { path: "a.txt" },
        { path: "a.txt", content: 5 },
        { path: "a.txt", content: "x", mode: 0o777 },
      ]
    ) {
      failed(await call(write, ws, args), "INVALID_ARGUMENTS");
    }
    deepEqual(await names(ws), []);
  });
});
