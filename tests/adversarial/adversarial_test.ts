/**
 * The adversarial suite of issue 17: every scenario of `_scenarios.ts` (a hostile workspace
 * and/or a hostile model) runs through the real `tern run` against the scripted model server
 * in every review mode: ask at a real terminal (tmux) with the person answering "n" to every
 * dialog, ask with no terminal (denied), auto with a reviewer scripted to allow everything,
 * and bypass. Each case asserts the invariants of `runCase()` (outside files byte-identical,
 * no planted secret or key in any request, no process left, the exit code, no terminal
 * controls in piped output) and the scenario's own.
 *
 * `TERN_ADV_ONLY=<text>` runs only the scenarios whose name contains it.
 */
import { bwrapNeed, type Need, tmuxNeed } from "../support/needs.ts";
import { limited, type Mode, MODES, runCase } from "./_bench.ts";
import { SCENARIOS } from "./_scenarios.ts";

const only = Deno.env.get("TERN_ADV_ONLY");

for (const scenario of SCENARIOS) {
  if (only !== undefined && !scenario.name.includes(only)) continue;
  const needs: Need[] = scenario.bwrap ? [bwrapNeed] : [];
  Deno.test({
    name: `adversarial (class ${scenario.cls || "S"}): ${scenario.name}`,
    ignore: needs.some((need) => !need.ok),
    fn: async (t) => {
      const modes = MODES.filter((mode) => mode !== "ask-pty" || tmuxNeed.ok);
      // Two cases at once: the machine has two cores, and each case is mostly waiting.
      const errors = await limited(modes.map((mode) => () => runCase(scenario, mode)), 2);
      for (const [index, mode] of modes.entries()) {
        await t.step(`--mode ${modeName(mode)}`, () => {
          if (errors[index] !== undefined) throw errors[index];
        });
      }
    },
  });
}

function modeName(mode: Mode): string {
  return mode === "ask-pty" ? "ask at a terminal, answering n" : mode;
}
