import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Tool } from "../../src/tools/define.ts";
import { createEditTool } from "../../src/tools/edit.ts";
import { createListTool } from "../../src/tools/list.ts";
import { createMultiEditTool } from "../../src/tools/multi_edit.ts";
import { createReadTool } from "../../src/tools/read.ts";
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

Deno.test("write(), edit() and multi_edit() change a file whose name is near the length limit", async () => {
  // The temporary file is `.<name>.tern-<8 hex>.tmp`: for a name over 236 bytes it was longer
  // than a name may be, so such a file could be neither created nor changed (ENAMETOOLONG).
  await withSandbox(async ({ ws }) => {
    const names = ["n".repeat(251) + ".md", "é".repeat(120) + ".md"];
    for (const name of names) {
      succeeded(await call(write, ws, { path: name, content: "one\n" }));
      const edit = createEditTool();
      succeeded(await call(edit, ws, { path: name, old_string: "one", new_string: "two" }));
      const edits = [{ old_string: "two", new_string: "three" }];
      succeeded(await call(createMultiEditTool(), ws, { path: name, edits }));
      equal(await Deno.readTextFile(join(ws, name)), "three\n");
    }
    deepEqual([...Deno.readDirSync(ws)].map((e) => e.name).sort(), [...names].sort());
  });
});

Deno.test("write(), edit() and multi_edit() refuse a read-only file and leave it as it was", async () => {
  // A rename replaces any file its folder lets it replace: `chmod a-w` (which root's writes
  // ignore too) was no protection against the model's writes.
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "locked.txt": "keep\n", "open.txt": "keep\n" });
    await Deno.chmod(join(ws, "locked.txt"), 0o444);
    const calls: [Tool, unknown][] = [
      [write, { path: "locked.txt", content: "pwned\n" }],
      [createEditTool(), { path: "locked.txt", old_string: "keep", new_string: "pwned" }],
      [createMultiEditTool(), {
        path: "locked.txt",
        edits: [{ old_string: "keep", new_string: "pwned" }],
      }],
    ];
    for (const [tool, args] of calls) {
      const message = failed(await call(tool, ws, args), "POLICY_DENIED");
      ok(message.includes('"locked.txt": the file is read-only (mode 0444)'), message);
    }
    equal(await Deno.readTextFile(join(ws, "locked.txt")), "keep\n");
    equal((await Deno.stat(join(ws, "locked.txt"))).mode! & 0o777, 0o444);
    deepEqual([...Deno.readDirSync(ws)].map((e) => e.name).sort(), ["locked.txt", "open.txt"]);
    // A file with any write bit is still written, keeping its bits.
    await Deno.chmod(join(ws, "open.txt"), 0o604);
    succeeded(await call(write, ws, { path: "open.txt", content: "new\n" }));
    equal((await Deno.stat(join(ws, "open.txt"))).mode! & 0o777, 0o604);
  });
});

Deno.test("file tools refuse a path ending in / that names a file, and write no file for one", async () => {
  // Resolving drops a trailing "/" (or "/."): `write "notes/"` created a file "notes", and
  // `read "a.ts/"` read a file the kernel would refuse (ENOTDIR).
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "a\n", "src/b.ts": "b\n" });
    const message = failed(
      await call(write, ws, { path: "notes/", content: "x" }),
      "INVALID_ARGUMENTS",
    );
    ok(message.includes('a path ending with "/" names a folder'), message);
    failed(await call(write, ws, { path: "a.ts/", content: "x" }), "INVALID_ARGUMENTS");
    const edit = { path: "a.ts/.", old_string: "a", new_string: "b" };
    failed(await call(createEditTool(), ws, edit), "INVALID_ARGUMENTS");
    const readMessage = failed(
      await call(createReadTool(), ws, { path: "a.ts/" }),
      "INVALID_ARGUMENTS",
    );
    ok(readMessage.includes('but "a.ts" is a file: leave out the "/"'), readMessage);
    deepEqual([...Deno.readDirSync(ws)].map((e) => e.name).sort(), ["a.ts", "src"]);
    equal(await Deno.readTextFile(join(ws, "a.ts")), "a\n");
    // A folder may still be named with its "/".
    equal(succeeded(await call(createListTool(), ws, { path: "src/" })), "src/b.ts");
    succeeded(await call(write, ws, { path: "src/c.ts", content: "c\n" }));
  });
});
