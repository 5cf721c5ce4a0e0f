import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createEditTool } from "../../src/tools/edit.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const edit = createEditTool();

Deno.test("edit() replaces a unique occurrence", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "const a = 1;\nconst b = 2;\n" });
    const obs = await call(edit, ws, { path: "a.ts", old_string: "b = 2", new_string: "b = 3" });
    equal(succeeded(obs), 'Replaced 1 occurrence in "a.ts"');
    equal(await Deno.readTextFile(join(ws, "a.ts")), "const a = 1;\nconst b = 3;\n");
    ok(obs.status === "SUCCEEDED" && obs.details?.kind === "diff");
    ok(obs.details.diff.includes("-const b = 2;\n+const b = 3;"), obs.details.diff);
  });
});

Deno.test("edit() fails when old text is not found", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "const a = 1;\n" });
    const message = failed(
      await call(edit, ws, { path: "a.ts", old_string: "const z", new_string: "x" }),
      "EXECUTION_FAILED",
    );
    ok(message.startsWith('Cannot edit "a.ts": old_string was not found'), message);
  });
});

Deno.test("edit() says when old text matches only with other whitespace", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "if (x) {\n\treturn 1;\n}\n" });
    const message = failed(
      await call(edit, ws, { path: "a.ts", old_string: "if (x) {\n    return 1;", new_string: "" }),
      "EXECUTION_FAILED",
    );
    ok(message.includes("whitespace is ignored"), message);
    equal(await Deno.readTextFile(join(ws, "a.ts")), "if (x) {\n\treturn 1;\n}\n");
  });
});

Deno.test("edit() fails when old text occurs twice and changes nothing", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "x = 1;\nx = 1;\n" });
    const message = failed(
      await call(edit, ws, { path: "a.ts", old_string: "x = 1;", new_string: "x = 2;" }),
      "EXECUTION_FAILED",
    );
    ok(message.includes("occurs 2 times") && message.includes("replace_all"), message);
    equal(await Deno.readTextFile(join(ws, "a.ts")), "x = 1;\nx = 1;\n");
  });
});

Deno.test("edit() replaces every occurrence with replace_all", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "foo foo\nfoo\n" });
    const obs = await call(edit, ws, {
      path: "a.ts",
      old_string: "foo",
      new_string: "bar",
      replace_all: true,
    });
    equal(succeeded(obs), 'Replaced 3 occurrences in "a.ts"');
    equal(await Deno.readTextFile(join(ws, "a.ts")), "bar bar\nbar\n");
  });
});

Deno.test("edit() inserts replacement text literally ($& and $1 stay as written)", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "price\n" });
    await call(edit, ws, { path: "a.ts", old_string: "price", new_string: "$& $1 $$" });
    equal(await Deno.readTextFile(join(ws, "a.ts")), "$& $1 $$\n");
  });
});

Deno.test("edit() keeps CRLF line endings", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "w.txt": "one\r\ntwo\r\nthree\r\n" });
    const obs = await call(edit, ws, {
      path: "w.txt",
      old_string: "one\ntwo",
      new_string: "uno\ndos\ndos bis",
    });
    succeeded(obs);
    equal(await Deno.readTextFile(join(ws, "w.txt")), "uno\r\ndos\r\ndos bis\r\nthree\r\n");
  });
});

Deno.test("edit() rejects empty and unchanged old text", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "a\n" });
    const empty = failed(
      await call(edit, ws, { path: "a.ts", old_string: "", new_string: "b" }),
      "INVALID_ARGUMENTS",
    );
    ok(empty.includes("old_string is empty"), empty);
    const same = failed(
      await call(edit, ws, { path: "a.ts", old_string: "a", new_string: "a" }),
      "INVALID_ARGUMENTS",
    );
    ok(same.includes("identical"), same);
  });
});

Deno.test("edit() reports a missing file as NOT_FOUND", async () => {
  await withSandbox(async ({ ws }) => {
    const message = failed(
      await call(edit, ws, { path: "none.ts", old_string: "a", new_string: "b" }),
      "NOT_FOUND",
    );
    ok(message.includes("write"), message);
  });
});

Deno.test("edit() refuses a hard-linked file and binary files", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await Deno.link(join(outside, "secret.txt"), join(ws, "linked.txt"));
    failed(
      await call(edit, ws, { path: "linked.txt", old_string: "top", new_string: "no" }),
      "POLICY_DENIED",
    );
    equal(await Deno.readTextFile(join(outside, "secret.txt")), "top secret\n");
    await Deno.writeFile(join(ws, "b.bin"), new Uint8Array([97, 0, 98]));
    const binary = failed(
      await call(edit, ws, { path: "b.bin", old_string: "a", new_string: "c" }),
      "EXECUTION_FAILED",
    );
    ok(binary.includes("binary"), binary);
  });
});

Deno.test("edit() rejects missing and wrong-typed fields", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "a\n" });
    for (
      const args of [
        { path: "a.ts", old_string: "a" },
        { path: "a.ts", old_string: "a", new_string: "b", replace_all: "yes" },
        { path: "a.ts", old_string: "a", new_string: "b", force: true },
      ]
    ) {
      failed(await call(edit, ws, args), "INVALID_ARGUMENTS");
    }
    equal(await Deno.readTextFile(join(ws, "a.ts")), "a\n");
  });
});

Deno.test("edit() refuses a replace_all that would grow the file past what an edit may leave", async () => {
  // 4,000 one-letter occurrences, each replaced by 8 KiB: 32 MiB, which split and joined in the
  // tool worker took it down with V8's fatal "invalid size" before.
  await withSandbox(async ({ ws }) => {
    const text = "a\n".repeat(4000);
    await writeFiles(ws, { "a.txt": text });
    const message = failed(
      await call(edit, ws, {
        path: "a.txt",
        old_string: "a",
        new_string: "b".repeat(8192),
        replace_all: true,
      }),
      "EXECUTION_FAILED",
    );
    ok(message.includes("over the 16777216 an edit may leave; nothing was changed"), message);
    equal(await Deno.readTextFile(join(ws, "a.txt")), text);
  });
});

Deno.test("edit() refuses a file larger than an edit changes, naming what to use instead", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "big.txt": "x".repeat(16 * 1024 * 1024 + 1) });
    const message = failed(
      await call(edit, ws, { path: "big.txt", old_string: "x", new_string: "y" }),
      "EXECUTION_FAILED",
    );
    ok(message.includes("over the 16777216 an edit changes; use bash"), message);
  });
});

Deno.test("edit() of 40,000 changed lines succeeds, its diff for the person skipped", async () => {
  // The diff's cost grows with the lines changed times the lines there are: unbounded, it held
  // the worker until the call timed out, while the change was already made.
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "data.csv": "a\n".repeat(40_000) });
    const obs = await call(edit, ws, {
      path: "data.csv",
      old_string: "a",
      new_string: "b",
      replace_all: true,
    });
    equal(succeeded(obs), 'Replaced 40000 occurrences in "data.csv"');
    ok(obs.status === "SUCCEEDED" && obs.details?.kind === "diff");
    const diff = obs.details.diff;
    ok(diff.startsWith("(diff skipped: more than 1000 lines changed)"), diff.slice(0, 80));
    equal(await Deno.readTextFile(join(ws, "data.csv")), "b\n".repeat(40_000));
  });
});
