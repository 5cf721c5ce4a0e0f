/**
 * A warm slot in a process that may not write the workspace, as bin/tern runs tern: prewarms
 * the plan at argv[0] (JSON) with its server in argv[1], runs `echo hi` at once and prints
 * what came of it as JSON. Used by warm_shell_test.ts.
 */
import { WarmSlot } from "../../src/sandbox/warm_shell.ts";
import type { ShellPlan } from "../../src/sandbox/types.ts";

const [planFile, dir] = Deno.args;
const plan: ShellPlan = JSON.parse(await Deno.readTextFile(planFile));
const slot = new WarmSlot(dir);
try {
  await slot.prewarm(plan);
  const result = await slot.run(plan, "echo hi", { cwd: plan.cwd });
  console.log(JSON.stringify({
    output: result?.output ?? null,
    released: slot.released(),
    held: (plan.guarded ?? []).filter((path) => slot.holds(path)),
  }));
} finally {
  await slot.close();
}
