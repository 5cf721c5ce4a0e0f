/**
 * The file tools with `ctx.roots`: folders outside the workspace that request_permissions
 * granted. Reads accept read and write roots, writes only write roots; paths outside the
 * workspace are shown absolute.
 */
import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import type { PathRoots } from "../../src/tools/paths.ts";
import { createEditTool } from "../../src/tools/edit.ts";
import { createGlobTool } from "../../src/tools/glob.ts";
import { createGrepTool } from "../../src/tools/grep.ts";
import { createListTool } from "../../src/tools/list.ts";
import { createReadTool } from "../../src/tools/read.ts";
import { createWriteTool } from "../../src/tools/write.ts";
import { context, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const READ_ONLY = (dir: string): PathRoots => ({ read: [dir], write: [] });
const WRITABLE = (dir: string): PathRoots => ({ read: [], write: [dir] });

Deno.test("read() reads a file in a granted root, and refuses it without the grant", async () => {
  await withSandbox(async ({ ws, outside }) => {
    const read = createReadTool();
    const path = join(outside, "secret.txt");
    match(failed(await read.run({ path }, context(ws)), "POLICY_DENIED"), /outside the workspace/);
    equal(
      succeeded(await read.run({ path }, context(ws, { roots: READ_ONLY(outside) }))),
      "     1\ttop secret",
    );
    equal(
      succeeded(await read.run({ path }, context(ws, { roots: WRITABLE(outside) }))),
      "     1\ttop secret",
    );
  });
});

Deno.test("list() and glob() in a granted root show absolute paths and apply its .gitignore", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await writeFiles(outside, { ".gitignore": "build/\n", "src/a.ts": "", "build/b.ts": "" });
    const ctx = context(ws, { roots: READ_ONLY(outside) });
    const listed = succeeded(await createListTool().run({ path: outside, depth: 2 }, ctx));
    deepEqual(listed.split("\n"), [
      join(outside, ".gitignore"),
      join(outside, "secret.txt"),
      `${join(outside, "src")}/`,
      join(outside, "src/a.ts"),
    ]);
    const globbed = succeeded(
      await createGlobTool().run({ pattern: "**/*.ts", path: outside }, ctx),
    );
    equal(globbed, join(outside, "src/a.ts"));
  });
});

for (const ripgrep of ["/usr/bin/rg", false] as const) {
  Deno.test(`grep() searches a granted root (${ripgrep ? "ripgrep" : "fallback"})`, async () => {
    await withSandbox(async ({ ws, outside }) => {
      await writeFiles(outside, { "src/a.ts": "const secretValue = 1;\n" });
      await writeFiles(ws, { "b.ts": "secret here too\n" });
      const grep = createGrepTool({ ripgrep });
      const ctx = context(ws, { roots: READ_ONLY(outside) });
      equal(
        succeeded(await grep.run({ pattern: "secret", path: outside }, ctx)),
        `${join(outside, "secret.txt")}:1:top secret\n${
          join(outside, "src/a.ts")
        }:1:const secretValue = 1;`,
      );
      equal(succeeded(await grep.run({ pattern: "secret" }, ctx)), "b.ts:1:secret here too");
      failed(await grep.run({ pattern: "secret", path: outside }, context(ws)), "POLICY_DENIED");
    });
  });
}

Deno.test("write() and edit() change files in a write root and nothing in a read-only root", async () => {
  await withSandbox(async ({ ws, outside }) => {
    const write = createWriteTool();
    const edit = createEditTool();
    const fresh = join(outside, "new/deep/file.txt");
    const secret = join(outside, "secret.txt");
    const readOnly = context(ws, { roots: READ_ONLY(outside) });
    match(
      failed(await write.run({ path: fresh, content: "x" }, readOnly), "POLICY_DENIED"),
      /granted for reading only/,
    );
    const editArgs = { path: secret, old_string: "top", new_string: "bottom" };
    failed(await edit.run(editArgs, readOnly), "POLICY_DENIED");
    equal(await Deno.readTextFile(secret), "top secret\n");

    const writable = context(ws, { roots: WRITABLE(outside) });
    equal(
      succeeded(await write.run({ path: fresh, content: "x" }, writable)),
      `Created "${fresh}" (1 bytes, 1 lines)`,
    );
    equal(await Deno.readTextFile(fresh), "x");
    succeeded(await edit.run(editArgs, writable));
    equal(await Deno.readTextFile(secret), "bottom secret\n");
  });
});
