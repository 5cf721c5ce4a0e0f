/**
 * A background start ended by the person: cancelled while it launches (Esc before the call
 * returned), the process must not be left running behind a call that reads as cancelled; stopped
 * while the call waits for readiness, the model must read that it was stopped, not that it ended.
 */
import { match, ok } from "node:assert/strict";
import { withGate } from "../agent/_gate_box.ts";
import { assertNoProcessWith, marker } from "../sandbox/_bwrap_helpers.ts";
import { bwrapNeed } from "../support/needs.ts";

Deno.test({
  name: "bash run_in_background cancelled while the process launches stops it and says so",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const mark = marker();
      const controller = new AbortController();
      // The supervisor announces the new process before `start()` returns to the tool: the
      // cancel comes in between, when no wait for readiness would see it.
      const unsubscribe = box.runtime.processes.onChange(() => controller.abort());
      const obs = await box.tools.get("bash")!.run(
        { command: `sleep ${mark}`, run_in_background: true },
        { workspace: box.ws, signal: controller.signal },
      );
      unsubscribe();
      ok(controller.signal.aborted);
      ok(obs.status === "ERROR" && obs.code === "CANCELLED", JSON.stringify(obs));
      await assertNoProcessWith(`sleep ${mark}`);
      ok(box.runtime.processes.list().every((info) => info.state === "stopped"));
    }),
});

Deno.test({
  name: "bash run_in_background stopped by the person while it waits says it was stopped",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const mark = marker();
      const call = box.call("bash", {
        command: `sleep ${mark}`,
        run_in_background: true,
        ready_text: "never printed",
        timeout_ms: 120_000,
      });
      while (box.runtime.processes.list().length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // `/procs stop p1` while the call waits for readiness: the model must not read it as a
      // crash (and start it again).
      await box.runtime.processes.control(false).stop("p1");
      const obs = await call;
      ok(obs.status === "SUCCEEDED", JSON.stringify(obs));
      match(obs.output, /^Started p1; it was stopped before it was ready\np1 stopped/);
      await assertNoProcessWith(`sleep ${mark}`);
    }),
});
