import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createListTool, MAX_LIST_ENTRIES } from "../../src/tools/list.ts";
import { createGrepTool } from "../../src/tools/grep.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const list = createListTool();

const TREE = {
  ".gitignore": "dist/\n*.log\n!keep.log\n",
  ".git/HEAD": "ref: refs/heads/main\n",
  ".github/ci.yml": "on: push\n",
  "README.md": "# r\n",
  "b.ts": "b\n",
  "debug.log": "noise\n",
  "keep.log": "kept\n",
  "dist/out.js": "x\n",
  "src/a.ts": "a\n",
  "src/gen/.gitignore": "*.gen.ts\n",
  "src/gen/x.gen.ts": "generated\n",
  "src/gen/y.ts": "y\n",
};

Deno.test("list() shows one level, sorted, folders with a slash, without ignored entries", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, TREE);
    const out = succeeded(await call(list, ws, {}));
    equal(out, [".github/", ".gitignore", "README.md", "b.ts", "keep.log", "src/"].join("\n"));
  });
});

Deno.test("list() descends to the given depth and applies nested .gitignore files", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, TREE);
    const out = succeeded(await call(list, ws, { path: "src", depth: 3 }));
    equal(out, ["src/a.ts", "src/gen/", "src/gen/.gitignore", "src/gen/y.ts"].join("\n"));
  });
});

Deno.test("list() shows an ignored folder's contents when asked for it by name", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, TREE);
    equal(succeeded(await call(list, ws, { path: "dist" })), "dist/out.js");
  });
});

Deno.test("list() shows symlinks with their target and does not follow them", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await Deno.symlink(outside, join(ws, "out"));
    const out = succeeded(await call(list, ws, { depth: 3 }));
    equal(out, `out -> ${outside}`);
  });
});

Deno.test("list() caps the number of entries with a note", async () => {
  await withSandbox(async ({ ws }) => {
    const files: Record<string, string> = {};
    for (let i = 0; i < MAX_LIST_ENTRIES + 5; i++) files[`f${String(i).padStart(4, "0")}`] = "";
    await writeFiles(ws, files);
    const lines = succeeded(await call(list, ws, {})).split("\n");
    equal(lines.length, MAX_LIST_ENTRIES + 1);
    ok(lines.at(-1)!.startsWith(`(showing the first ${MAX_LIST_ENTRIES} entries`), lines.at(-1));
  });
});

Deno.test("list() reports empty folders, files and missing paths", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.txt": "a" });
    await Deno.mkdir(join(ws, "empty"));
    equal(succeeded(await call(list, ws, { path: "empty" })), "(empty directory)");
    ok(failed(await call(list, ws, { path: "a.txt" }), "EXECUTION_FAILED").includes("read"));
    failed(await call(list, ws, { path: "nope" }), "NOT_FOUND");
  });
});

Deno.test("list() refuses paths outside the workspace", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await Deno.symlink(outside, join(ws, "out"));
    failed(await call(list, ws, { path: ".." }), "POLICY_DENIED");
    failed(await call(list, ws, { path: outside }), "POLICY_DENIED");
    failed(await call(list, ws, { path: "out" }), "POLICY_DENIED");
  });
});

Deno.test("list() rejects a depth over 5 and unknown fields", async () => {
  await withSandbox(async ({ ws }) => {
    failed(await call(list, ws, { depth: 6 }), "INVALID_ARGUMENTS");
    failed(await call(list, ws, { depth: 1.5 }), "INVALID_ARGUMENTS");
    failed(await call(list, ws, { path: ".", recursive: true }), "INVALID_ARGUMENTS");
  });
});

Deno.test("list() and grep quote a file name with a line break: it cannot forge lines", async () => {
  await withSandbox(async ({ ws }) => {
    const name = "x.ts\nfake.ts:99:forged";
    await writeFiles(ws, { [name]: "hello\n", "real.ts": "hello\n" });
    const listed = succeeded(await call(list, ws, { path: "." }));
    equal(listed.split("\n").includes("fake.ts:99:forged"), false, listed);
    ok(listed.split("\n").includes(JSON.stringify(name)), listed);
    for (const grep of [createGrepTool(), createGrepTool({ ripgrep: false })]) {
      const found = succeeded(await call(grep, ws, { pattern: "hello", path: "." }));
      equal(found.split("\n").some((line) => line.startsWith("fake.ts:99:forged")), false, found);
      ok(found.includes(`${JSON.stringify(name)}:1:hello`), found);
    }
  });
});

Deno.test("list() and grep escape a name's line and paragraph separators and C1 controls, not only quote it", async () => {
  await withSandbox(async ({ ws }) => {
    const name = "x.ts\u2028fake.ts:99:forged\u0085more\u2029";
    await writeFiles(ws, { [name]: "hello\n" });
    const listed = succeeded(await call(list, ws, { path: "." }));
    ok(listed.includes(String.raw`"x.ts\u2028fake.ts:99:forged\u0085more\u2029"`), listed);
    for (const grep of [createGrepTool(), createGrepTool({ ripgrep: false })]) {
      const found = succeeded(await call(grep, ws, { pattern: "hello", path: "." }));
      ok(!/[\u0085\u2028\u2029]/.test(found), found);
      ok(found.includes(String.raw`\u2028fake.ts:99:forged`), found);
    }
  });
});

Deno.test("list() quotes a symlink's target with a line break or escape: it cannot forge lines", async () => {
  await withSandbox(async ({ ws }) => {
    const target = "nowhere\nsrc/IMPORTANT.md\n\x1b]0;TITLE\x07";
    await Deno.symlink(target, join(ws, "evil_link"));
    await writeFiles(ws, { "real.ts": "" });
    const listed = succeeded(await call(list, ws, { path: "." }));
    deepEqual(listed.split("\n"), [`evil_link -> ${JSON.stringify(target)}`, "real.ts"]);
    ok(!listed.includes("\x1b"), listed);
  });
});
