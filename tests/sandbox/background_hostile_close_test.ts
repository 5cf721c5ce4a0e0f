/**
 * A background start that the sandbox's close overtakes (the model changed, the session ended
 * while the call launched): the process is stopped with the sandbox, and said to be, not listed
 * as running nor later told to the model as one that ended by itself.
 */
import { deepEqual, equal } from "node:assert/strict";
import { withGate } from "../agent/_gate_box.ts";
import { assertNoProcessWith, marker } from "./_bwrap_helpers.ts";
import { bwrapNeed } from "../support/needs.ts";

for (const unsandboxed of [false, true]) {
  Deno.test({
    name: `ProcessSupervisor.close() during a start ${
      unsandboxed ? "without a sandbox" : "in bubblewrap"
    } stops it and says it was stopped`,
    ignore: !unsandboxed && !bwrapNeed.ok,
    fn: () =>
      withGate({ mode: "bypass" }, async (box) => {
        const mark = marker();
        const supervisor = box.runtime.processes;
        const starting = supervisor.control(unsandboxed).start(`sleep ${mark}`, { cwd: box.ws });
        // The launch is under way (the launcher has not returned): close overtakes it.
        const closing = supervisor.close();
        const info = await starting;
        await closing;
        equal(info.state, "stopped");
        await assertNoProcessWith(`sleep ${mark}`);
        // Its end (once its output is read) is no news for the model.
        await supervisor.control(false).stop(info.id);
        deepEqual(supervisor.list().map((p) => p.state), ["stopped"]);
        deepEqual(supervisor.takeNotes(), []);
      }),
  });
}
