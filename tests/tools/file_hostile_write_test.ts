import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createEditTool } from "../../src/tools/edit.ts";
import { createMultiEditTool } from "../../src/tools/multi_edit.ts";
import { createWriteTool } from "../../src/tools/write.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const write = createWriteTool();

Deno.test("write() refuses a new file reached through a dangling symlink, which its path does not show", async () => {
  // A repository can ship `notes/todo.md -> ../.github/workflows/pwn.yml` (or a folder link to
  // a folder not made yet): the permission question resolves only what exists, so it showed
  // "notes/todo.md" while the write created the workflow.
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { ".github/workflows/ci.yml": "on: push\n", "notes/keep.md": "x" });
    await Deno.symlink("../.github/workflows/pwn.yml", join(ws, "notes/todo.md"));
    await Deno.symlink(".github/later", join(ws, "drafts"));
    for (const path of ["notes/todo.md", "drafts/new.yml"]) {
      const message = failed(
        await call(write, ws, { path, content: "on: push\n" }),
        "POLICY_DENIED",
      );
      ok(message.includes("dangling") || message.includes("does not exist yet"), message);
    }
    deepEqual([...Deno.readDirSync(join(ws, ".github/workflows"))].map((e) => e.name), ["ci.yml"]);
    equal(await Deno.lstat(join(ws, ".github/later")).catch(() => null), null);
    // A link to a file that exists is followed (the question shows where it leads), and a new
    // file in a real folder is written as named.
    await Deno.symlink("keep.md", join(ws, "notes/alias.md"));
    succeeded(await call(write, ws, { path: "notes/alias.md", content: "y" }));
    equal(await Deno.readTextFile(join(ws, "notes/keep.md")), "y");
    succeeded(await call(write, ws, { path: "notes/deep/new.md", content: "z" }));
    equal(await Deno.readTextFile(join(ws, "notes/deep/new.md")), "z");
  });
});

Deno.test("write() and edit() keep a file's permission bits but never its set-ID bits", async () => {
  // The rewritten file is tern's user's (root under a root tern): a set-user-ID bit kept would
  // make the model's content a program that runs as that user for whoever starts it.
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "tool": "#!/bin/sh\n", "run": "#!/bin/sh\necho a\n" });
    await Deno.chmod(join(ws, "tool"), 0o6755);
    await Deno.chmod(join(ws, "run"), 0o4750);
    succeeded(await call(write, ws, { path: "tool", content: "#!/bin/sh\nid\n" }));
    const edit = createEditTool();
    succeeded(await call(edit, ws, { path: "run", old_string: "echo a", new_string: "id" }));
    equal((await Deno.stat(join(ws, "tool"))).mode! & 0o7777, 0o755);
    equal((await Deno.stat(join(ws, "run"))).mode! & 0o7777, 0o750);
  });
});

Deno.test("write(), edit() and multi_edit() name a file holding a line break or a quote quoted once", async () => {
  // A repository's name "a\nb.md" was shown as `""a\nb.md""`, and `say "hi".md` as
  // `"say "hi".md"`: neither reads as the one name it is.
  await withSandbox(async ({ ws }) => {
    const multiEdit = createMultiEditTool();
    const edit = createEditTool();
    for (
      const [name, quoted] of [["a\nb.md", '"a\\nb.md"'], ['say "hi".md', '"say \\"hi\\".md"']]
    ) {
      equal(
        succeeded(await call(write, ws, { path: name, content: "one\n" })),
        `Created ${quoted} (4 bytes, 1 lines)`,
      );
      equal(
        succeeded(await call(edit, ws, { path: name, old_string: "one", new_string: "two" })),
        `Replaced 1 occurrence in ${quoted}`,
      );
      equal(
        succeeded(
          await call(multiEdit, ws, {
            path: name,
            edits: [{ old_string: "two", new_string: "six" }],
          }),
        ),
        `Made 1 replacement in ${quoted}`,
      );
      equal(await Deno.readTextFile(join(ws, name)), "six\n");
    }
    equal(
      succeeded(await call(write, ws, { path: "plain.md", content: "x" })),
      'Created "plain.md" (1 bytes, 1 lines)',
    );
  });
});
