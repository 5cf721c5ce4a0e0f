import { equal, ok } from "node:assert/strict";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern demo runs the loop and tools offline and removes its workspace", async () => {
  const ws = await tempWorkspace();
  try {
    const run = await runTern(["demo"], { cwd: ws.dir, env: { HOME: ws.home, NO_COLOR: "1" } });
    equal(run.code, 0, run.stderr);
    for (const heading of ["INPUT", "TOOLS", "RESULT"]) ok(run.stdout.includes(heading), heading);
    ok(run.stdout.includes("exit reason: COMPLETED"), run.stdout);
    ok(/• write src\/greet\.ts ✓/.test(run.stdout), run.stdout);
    ok(run.stdout.includes("export function greet(name: string)"), run.stdout);
    const workspace = /workspace: (\S+)/.exec(run.stdout)?.[1];
    ok(workspace, "the demo names its workspace");
    ok(!(await Deno.stat(workspace).then(() => true, () => false)), "workspace removed");
  } finally {
    await ws.cleanup();
  }
});
