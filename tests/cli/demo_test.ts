import { equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern demo shows plan, sandboxed command, refused escape and diff, offline, and removes its workspace", async () => {
  const ws = await tempWorkspace();
  try {
    const run = await runTern(["demo"], { cwd: ws.dir, env: { HOME: ws.home, NO_COLOR: "1" } });
    equal(run.code, 0, run.stderr);
    for (const heading of ["INPUT", "PLAN", "TOOLS", "RESULT"]) {
      ok(run.stdout.includes(`${heading}\n`), heading);
    }
    ok(run.stdout.includes("exit reason: COMPLETED"), run.stdout);
    ok(/• write src\/greet\.ts ✓/.test(run.stdout), run.stdout);
    // The sandboxed command's output, the refused escape with its reason, the edit's diff.
    ok(
      /• bash wc -l src\/greet\.ts ✓[^\n]*\n\s+SUCCEEDED\n\s+4 src\/greet\.ts\n/.test(run.stdout),
      run.stdout,
    );
    ok(
      /• write \.\.\/escape\.txt ✗ ERROR\[POLICY_DENIED\] Path "\.\.\/escape\.txt" is outside the workspace/
        .test(run.stdout),
      run.stdout,
    );
    ok(run.stdout.includes("-  return `Hello, ${name}.`;\n"), run.stdout);
    ok(run.stdout.includes("+  return `Hello, ${name}! Welcome to tern.`;\n"), run.stdout);
    ok(
      run.stdout.includes("check: src/greet.ts is as edited, nothing was written outside"),
      run.stdout,
    );
    const workspace = /workspace: (\S+)/.exec(run.stdout)?.[1];
    ok(workspace, "the demo names its workspace");
    ok(!(await Deno.stat(workspace).then(() => true, () => false)), "workspace removed");
    const outside = join(dirname(workspace), "escape.txt");
    ok(!(await Deno.stat(outside).then(() => true, () => false)), "nothing written outside");
  } finally {
    await ws.cleanup();
  }
});
