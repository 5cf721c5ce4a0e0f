/**
 * What a hostile background process prints, as the process tools return it: the log keeps its
 * newest characters and results are cut to size, and no cut may leave half of a surrogate pair
 * (a lone surrogate makes every later request to a model API that rejects them invalid).
 */
import { equal, ok } from "node:assert/strict";
import { withGate } from "../agent/_gate_box.ts";
import { assertNoProcessWith, marker } from "../sandbox/_bwrap_helpers.ts";
import { bwrapNeed } from "../support/needs.ts";
import type { Observation } from "../../src/core/observation.ts";

function output(obs: Observation): string {
  equal(obs.status, "SUCCEEDED", JSON.stringify(obs).slice(0, 500));
  return obs.status === "SUCCEEDED" ? obs.output : "";
}

Deno.test({
  name: "process_logs and a background start never return half of a surrogate pair",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const mark = marker();
      // 260,008 UTF-16 units: the log keeps the last 200,000, starting on an emoji's low half;
      // the lines shown are cut again to the result's size, in the middle of the emoji.
      const script = "import sys; sys.stdout.write('a' + '\\U0001F600' * 100001 + 'b\\n' + " +
        "'\\U0001F600' * 30000 + 'xy\\n'); sys.stdout.flush()";
      const started = output(
        await box.call("bash", {
          command: `python3 -c "${script}"; sleep ${mark}`,
          run_in_background: true,
          ready_text: "xy",
          timeout_ms: 60_000,
        }),
      );
      ok(started.startsWith("Started p1; it is ready"), started.slice(0, 200));
      ok(started.isWellFormed(), "the start's result is well-formed");
      for (const args of [{}, { lines: 1 }, { grep: "b" }]) {
        const logs = output(await box.call("process_logs", { id: "p1", ...args }));
        ok(logs.includes("😀"), JSON.stringify(args));
        ok(logs.isWellFormed(), `process_logs ${JSON.stringify(args)} is well-formed`);
      }
      output(await box.call("process_stop", { id: "p1" }));
      await assertNoProcessWith(`sleep ${mark}`);
    }),
});

Deno.test({
  name: "the process tools never cut a long command in the middle of an emoji",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const mark = marker();
      // The command is shown in 200 characters at most: the cut falls between an emoji's halves.
      const command = `: ${"a".repeat(196)}😀😀; sleep ${mark}`;
      const results = [
        output(await box.call("bash", { command, run_in_background: true })),
        output(await box.call("process_list", {})),
        output(await box.call("process_logs", { id: "p1" })),
        output(await box.call("process_stop", { id: "p1" })),
      ];
      for (const result of results) {
        ok(result.includes(`${"a".repeat(196)}…`), result);
        ok(result.isWellFormed(), result);
      }
      await assertNoProcessWith(`sleep ${mark}`);
    }),
});
