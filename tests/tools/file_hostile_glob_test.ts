import { equal, ok } from "node:assert/strict";
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
