import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createGlobTool } from "../../src/tools/glob.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const glob = createGlobTool();

Deno.test("glob() refuses a pattern whose matching backtracks, at once, and still matches usual ones", async () => {
  // A name of 200 "a" against "*a*a*a*a*b": the matcher's expression took 13 s on it (eight
  // wildcards: hours), holding the tool worker and every call waiting on it.
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { ["a".repeat(200)]: "x", "src/a_test.ts": "x" });
    for (const pattern of ["*a*a*a*a*b", "src/*a*a*a*a*a*a*a*b", "**/x/**/y/**/z"]) {
      const started = performance.now();
      const message = failed(await call(glob, ws, { pattern }), "INVALID_ARGUMENTS");
      ok(performance.now() - started < 2_000, `${pattern} took too long`);
      ok(message.includes("too costly"), message);
    }
    equal(succeeded(await call(glob, ws, { pattern: "**/*_*.*" })), "src/a_test.ts");
    equal(succeeded(await call(glob, ws, { pattern: "src/**/*.ts" })), "src/a_test.ts");
  });
});

Deno.test("glob() lists nothing through a symlinked folder a pattern names, outside or in", async () => {
  // tinyglobby starts at a pattern's fixed part: "docs/*" listed the folder a "docs" link led
  // to, so names anywhere outside (a home folder's, /etc's) could be listed level by level.
  await withSandbox(async ({ ws, outside }) => {
    await writeFiles(ws, { "src/a.ts": "x" });
    await writeFiles(outside, { "dir/nested.txt": "top secret\n" });
    await Deno.symlink(outside, join(ws, "docs"));
    await Deno.symlink("/etc", join(ws, "src/etc"));
    await Deno.symlink("src", join(ws, "alias"));
    const patterns = [
      "docs/*",
      "docs/secret.txt",
      "docs/dir/*",
      "./docs/*",
      "docs//dir/nested.txt",
      "{docs,src}/*",
      "src/etc/pass*",
      "src/etc/passwd",
      "alias/*",
    ];
    for (const pattern of patterns) {
      const found = succeeded(await call(glob, ws, { pattern }));
      const none = found.startsWith("No files match");
      ok(none || !/secret|nested|passwd|alias\//.test(found), `${pattern}: ${found}`);
    }
    equal(succeeded(await call(glob, ws, { pattern: "{docs,src}/*" })), "src/a.ts");
    equal(succeeded(await call(glob, ws, { pattern: "src/*.ts" })), "src/a.ts");
  });
});
