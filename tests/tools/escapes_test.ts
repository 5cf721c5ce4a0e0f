/** Every file tool refuses paths that leave the workspace, however they are spelled. */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createEditTool } from "../../src/tools/edit.ts";
import { createGlobTool } from "../../src/tools/glob.ts";
import { createGrepTool } from "../../src/tools/grep.ts";
import { createListTool } from "../../src/tools/list.ts";
import { createReadTool } from "../../src/tools/read.ts";
import { createWriteTool } from "../../src/tools/write.ts";
import { call, failed, type Sandbox, withSandbox } from "./_helpers.ts";

const read = createReadTool();
const write = createWriteTool();
const edit = createEditTool();

/** Paths to the outside file: "..", absolute, through a file symlink and a folder symlink. */
async function escapes({ ws, outside }: Sandbox): Promise<string[]> {
  await Deno.symlink(join(outside, "secret.txt"), join(ws, "link.txt"));
  await Deno.symlink(outside, join(ws, "linkdir"));
  await Deno.mkdir(join(ws, "sub"));
  await Deno.symlink("../../outside", join(ws, "sub/up"));
  return [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    join(outside, "secret.txt"),
    "link.txt",
    "linkdir/secret.txt",
    "sub/up/secret.txt",
  ];
}

async function outsideNames(outside: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(outside)) names.push(entry.name);
  return names.sort();
}

Deno.test("read() refuses every way out of the workspace", async () => {
  await withSandbox(async (box) => {
    for (const path of await escapes(box)) {
      const message = failed(await call(read, box.ws, { path }), "POLICY_DENIED");
      ok(message.includes(`is outside the workspace "${box.ws}"`), message);
      ok(!message.includes("top secret"));
    }
  });
});

Deno.test("write() refuses every way out and leaves the outside untouched", async () => {
  await withSandbox(async (box) => {
    for (const path of await escapes(box)) {
      failed(await call(write, box.ws, { path, content: "pwned" }), "POLICY_DENIED");
    }
    failed(await call(write, box.ws, { path: "linkdir/new.txt", content: "x" }), "POLICY_DENIED");
    failed(await call(write, box.ws, { path: "linkdir/a/b.txt", content: "x" }), "POLICY_DENIED");
    equal(await Deno.readTextFile(join(box.outside, "secret.txt")), "top secret\n");
    deepEqual(await outsideNames(box.outside), ["secret.txt"]);
  });
});

Deno.test("write() refuses a dangling symlink that points outside", async () => {
  await withSandbox(async (box) => {
    await Deno.symlink(join(box.outside, "planted.sh"), join(box.ws, "planted.sh"));
    failed(await call(write, box.ws, { path: "planted.sh", content: "x" }), "POLICY_DENIED");
    deepEqual(await outsideNames(box.outside), ["secret.txt"]);
  });
});

Deno.test("edit() refuses every way out and leaves the outside untouched", async () => {
  await withSandbox(async (box) => {
    for (const path of await escapes(box)) {
      failed(
        await call(edit, box.ws, { path, old_string: "top", new_string: "no" }),
        "POLICY_DENIED",
      );
    }
    equal(await Deno.readTextFile(join(box.outside, "secret.txt")), "top secret\n");
  });
});

Deno.test("list(), glob() and grep() refuse every way out as their folder", async () => {
  await withSandbox(async (box) => {
    const tools = [createListTool(), createGlobTool(), createGrepTool({ ripgrep: false })];
    for (const path of [...await escapes(box), "../outside", box.outside, "linkdir"]) {
      for (const tool of tools) {
        const args = tool.name === "list" ? { path } : { path, pattern: "*" };
        const message = failed(await call(tool, box.ws, args), "POLICY_DENIED");
        ok(message.includes(`is outside the workspace "${box.ws}"`), message);
      }
    }
  });
});
