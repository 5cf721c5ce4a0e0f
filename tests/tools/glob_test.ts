import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createGlobTool, MAX_GLOB_RESULTS } from "../../src/tools/glob.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const glob = createGlobTool();

const TREE = {
  ".gitignore": "node_modules/\n*.gen.ts\n/build\n",
  ".git/config.ts": "x",
  ".github/check.ts": "x",
  "main.ts": "x",
  "a.gen.ts": "x",
  "build/out.ts": "x",
  "node_modules/pkg/index.ts": "x",
  "src/a.ts": "x",
  "src/a.tsx": "x",
  "src/b.js": "x",
  "src/build/keep.ts": "x",
  "src/vendor/.gitignore": "*\n!.gitignore\n!kept.ts\n",
  "src/vendor/dropped.ts": "x",
  "src/vendor/kept.ts": "x",
};

Deno.test("glob() finds files sorted by path and respects root and nested .gitignore", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, TREE);
    const out = succeeded(await call(glob, ws, { pattern: "**/*.ts" }));
    equal(
      out,
      [".github/check.ts", "main.ts", "src/a.ts", "src/build/keep.ts", "src/vendor/kept.ts"]
        .join("\n"),
    );
  });
});

Deno.test("glob() searches below path and prints workspace-relative paths", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, TREE);
    const out = succeeded(await call(glob, ws, { pattern: "*.{ts,tsx}", path: "src" }));
    equal(out, "src/a.ts\nsrc/a.tsx");
  });
});

Deno.test("glob() says when nothing matches", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, TREE);
    equal(
      succeeded(await call(glob, ws, { pattern: "**/*.rs" })),
      'No files match "**/*.rs" in "."',
    );
  });
});

Deno.test("glob() caps the result count with a note", async () => {
  await withSandbox(async ({ ws }) => {
    const files: Record<string, string> = {};
    for (let i = 0; i < MAX_GLOB_RESULTS + 3; i++) {
      files[`d/f${String(i).padStart(4, "0")}.txt`] = "";
    }
    await writeFiles(ws, files);
    const lines = succeeded(await call(glob, ws, { pattern: "**/*.txt" })).split("\n");
    equal(lines.length, MAX_GLOB_RESULTS + 1);
    equal(lines[0], "d/f0000.txt");
    ok(
      lines.at(-1)!.includes(`first ${MAX_GLOB_RESULTS} of ${MAX_GLOB_RESULTS + 3}`),
      lines.at(-1),
    );
  });
});

Deno.test("glob() refuses patterns and paths that leave the workspace", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await Deno.symlink(outside, join(ws, "out"));
    failed(await call(glob, ws, { pattern: "../outside/*" }), "POLICY_DENIED");
    failed(await call(glob, ws, { pattern: `${outside}/*` }), "POLICY_DENIED");
    failed(await call(glob, ws, { pattern: "*", path: ".." }), "POLICY_DENIED");
    failed(await call(glob, ws, { pattern: "*", path: "out" }), "POLICY_DENIED");
    // A symlinked folder is not followed.
    equal(
      succeeded(await call(glob, ws, { pattern: "**/*.txt" })),
      'No files match "**/*.txt" in "."',
    );
  });
});

Deno.test("glob() rejects missing and extra fields", async () => {
  await withSandbox(async ({ ws }) => {
    failed(await call(glob, ws, {}), "INVALID_ARGUMENTS");
    failed(await call(glob, ws, { pattern: "*", limit: 3 }), "INVALID_ARGUMENTS");
    failed(await call(glob, ws, { pattern: "*", path: "missing" }), "NOT_FOUND");
  });
});
