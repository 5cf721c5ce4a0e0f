import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createMultiEditTool } from "../../src/tools/multi_edit.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const multiEdit = createMultiEditTool();
const SOURCE = "const a = 1;\nconst b = 2;\nconst c = 3;\n";

Deno.test("multi_edit() applies every replacement in order and writes the file once", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": SOURCE });
    const before = (await Deno.stat(join(ws, "a.ts"))).ino;
    const obs = await call(multiEdit, ws, {
      path: "a.ts",
      edits: [
        { old_string: "a = 1", new_string: "a = 10" },
        { old_string: "c = 3", new_string: "c = 30" },
        // Sees the text as the first edit left it.
        { old_string: "a = 10;", new_string: "a = 100;" },
      ],
    });
    equal(succeeded(obs), 'Made 3 replacements in "a.ts"');
    equal(
      await Deno.readTextFile(join(ws, "a.ts")),
      "const a = 100;\nconst b = 2;\nconst c = 30;\n",
    );
    // Replaced through a temporary file and a rename, like edit: a new inode.
    ok((await Deno.stat(join(ws, "a.ts"))).ino !== before);
    ok(obs.status === "SUCCEEDED" && obs.details?.kind === "diff");
    ok(obs.details.diff.includes("-const c = 3;\n+const c = 30;"), obs.details.diff);
    const leftovers = [...Deno.readDirSync(ws)].map((entry) => entry.name);
    equal(leftovers.join(), "a.ts");
  });
});

Deno.test("multi_edit() changes nothing when one edit does not match, and names it", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": SOURCE });
    const message = failed(
      await call(multiEdit, ws, {
        path: "a.ts",
        edits: [
          { old_string: "a = 1", new_string: "a = 10" },
          { old_string: "const z", new_string: "x" },
          { old_string: "c = 3", new_string: "c = 30" },
        ],
      }),
      "EXECUTION_FAILED",
    );
    ok(message.startsWith('Cannot edit "a.ts": edit 2 of 3: old_string was not found'), message);
    ok(message.endsWith("nothing was changed"), message);
    equal(await Deno.readTextFile(join(ws, "a.ts")), SOURCE);
  });
});

Deno.test("multi_edit() fails when an old text occurs twice, naming the edit and the count", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": SOURCE });
    const message = failed(
      await call(multiEdit, ws, {
        path: "a.ts",
        edits: [
          { old_string: "b = 2", new_string: "b = 20" },
          { old_string: "const", new_string: "let" },
        ],
      }),
      "EXECUTION_FAILED",
    );
    ok(message.includes("edit 2 of 2: old_string occurs 3 times"), message);
    equal(await Deno.readTextFile(join(ws, "a.ts")), SOURCE);
  });
});

Deno.test("multi_edit() says when an edit's text was changed by an earlier edit", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": SOURCE });
    const message = failed(
      await call(multiEdit, ws, {
        path: "a.ts",
        edits: [
          { old_string: "b = 2", new_string: "b = 20" },
          { old_string: "b = 2;", new_string: "b = 3;" },
        ],
      }),
      "EXECUTION_FAILED",
    );
    ok(
      message.includes("edit 2 of 2: old_string was not found in the text the edits before"),
      message,
    );
    equal(await Deno.readTextFile(join(ws, "a.ts")), SOURCE);
  });
});

Deno.test("multi_edit() rejects empty, unchanged and missing edits before reading", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": SOURCE });
    failed(await call(multiEdit, ws, { path: "a.ts", edits: [] }), "INVALID_ARGUMENTS");
    failed(
      await call(multiEdit, ws, { path: "a.ts", edits: [{ old_string: "", new_string: "x" }] }),
      "INVALID_ARGUMENTS",
    );
    const same = failed(
      await call(multiEdit, ws, {
        path: "a.ts",
        edits: [{ old_string: "a", new_string: "b" }, { old_string: "b", new_string: "b" }],
      }),
      "INVALID_ARGUMENTS",
    );
    ok(same.includes("edit 2 of 2: old_string and new_string are identical"), same);
    const missing = failed(
      await call(multiEdit, ws, { path: "nope.ts", edits: [{ old_string: "a", new_string: "b" }] }),
      "NOT_FOUND",
    );
    ok(missing.includes("use write to create a new file"), missing);
    equal(await Deno.readTextFile(join(ws, "a.ts")), SOURCE);
  });
});

Deno.test("multi_edit() keeps CRLF line endings", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.txt": "one\r\ntwo\r\nthree\r\n" });
    succeeded(
      await call(multiEdit, ws, {
        path: "a.txt",
        edits: [
          { old_string: "one\ntwo", new_string: "1\n2" },
          { old_string: "three", new_string: "3" },
        ],
      }),
    );
    equal(await Deno.readTextFile(join(ws, "a.txt")), "1\r\n2\r\n3\r\n");
  });
});

Deno.test("multi_edit() refuses paths outside the workspace, symlinks out and protected folders", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await Deno.symlink(join(outside, "secret.txt"), join(ws, "link.txt"));
    await Deno.symlink(outside, join(ws, "linkdir"));
    await writeFiles(ws, { ".git/config": "[core]\n" });
    const edits = [{ old_string: "top", new_string: "changed" }];
    for (
      const path of [
        "../outside/secret.txt",
        join(outside, "secret.txt"),
        "link.txt",
        "linkdir/secret.txt",
      ]
    ) {
      failed(await call(multiEdit, ws, { path, edits }), "POLICY_DENIED");
    }
    failed(
      await call(multiEdit, ws, {
        path: ".git/config",
        edits: [{ old_string: "[core]", new_string: "[core]\nhooksPath = /tmp" }],
      }),
      "POLICY_DENIED",
    );
    equal(await Deno.readTextFile(join(outside, "secret.txt")), "top secret\n");
    equal(await Deno.readTextFile(join(ws, ".git/config")), "[core]\n");
  });
});

Deno.test("multi_edit() refuses a hard-linked file and binary files", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await Deno.link(join(outside, "secret.txt"), join(ws, "hard.txt"));
    const edits = [{ old_string: "top", new_string: "x" }];
    failed(await call(multiEdit, ws, { path: "hard.txt", edits }), "POLICY_DENIED");
    await Deno.writeFile(join(ws, "bin.dat"), new Uint8Array([116, 111, 112, 0, 1]));
    const message = failed(
      await call(multiEdit, ws, { path: "bin.dat", edits }),
      "EXECUTION_FAILED",
    );
    ok(message.includes("binary file"), message);
    equal(await Deno.readTextFile(join(outside, "secret.txt")), "top secret\n");
  });
});
