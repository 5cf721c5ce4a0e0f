/**
 * A background start whose process fails at once (a dev server that cannot start, a command not
 * found) must not read as a success to the person: its exit code goes with the result, as a
 * command's does, so the call's line shows `exit N` and the audit record has it.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { withGate } from "../agent/_gate_box.ts";
import { assertNoProcessWith, marker } from "../sandbox/_bwrap_helpers.ts";
import { bwrapNeed } from "../support/needs.ts";

Deno.test({
  name: "a background start whose process ended before it was ready carries its exit code",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    const mark = marker();
    await withGate({ mode: "bypass" }, async (box) => {
      const failed = await box.call("bash", {
        command: "echo 'cannot bind'; exit 3",
        run_in_background: true,
        ready_text: "listening",
        timeout_ms: 60_000,
      });
      ok(failed.status === "SUCCEEDED", JSON.stringify(failed));
      ok(failed.output.startsWith("Started p1; it ended before it was ready"), failed.output);
      deepEqual(failed.details, {
        kind: "command",
        exitCode: 3,
        timedOut: false,
        truncated: false,
      });
      equal(box.audit.at(-1)?.exitCode, 3);
      // Still running when the call returns: no exit code to tell.
      const running = await box.call("bash", {
        command: `echo listening; exec sleep ${mark}`,
        run_in_background: true,
        ready_text: "listening",
        timeout_ms: 60_000,
      });
      ok(running.status === "SUCCEEDED", JSON.stringify(running));
      ok(running.output.startsWith("Started p2; it is ready"), running.output);
      equal(running.details, undefined);
      equal(box.audit.at(-1)?.exitCode, undefined);
    });
    // Closing the sandbox stopped the one still running.
    await assertNoProcessWith(`sleep ${mark}`);
  },
});
