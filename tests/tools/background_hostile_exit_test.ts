/**
 * How a background process's end is told: the exit code of one killed by a signal (a crashing
 * server, one that aborts) is 128 plus that signal's number, as for a command, whichever the
 * signal; and `process_stop` never claims to have stopped a process that had already ended.
 */
import { equal, match, ok } from "node:assert/strict";
import { withGate } from "../agent/_gate_box.ts";
import type { Observation } from "../../src/core/observation.ts";

function output(obs: Observation): string {
  equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
  return obs.status === "SUCCEEDED" ? obs.output : "";
}

Deno.test("a background process killed by a signal ends with 128 plus its number", async () => {
  // Without a sandbox the process's shell is the process tern waits for: its own signal shows.
  await withGate({ mode: "bypass", profile: ":danger-full-access" }, async (box) => {
    for (const [signal, code] of [["SEGV", 139], ["ABRT", 134], ["USR1", 138]] as const) {
      const started = await box.call("bash", {
        command: `kill -${signal} $$`,
        run_in_background: true,
        ready_text: "never printed",
        timeout_ms: 60_000,
      });
      const text = output(started);
      ok(text.includes(`exited (exit code ${code})`), `${signal}: ${text}`);
      equal(
        started.status === "SUCCEEDED" && started.details?.kind === "command"
          ? started.details.exitCode
          : undefined,
        code,
      );
    }
    match(output(await box.call("process_list", {})), /p1 exited \(exit code 139\)/);
  });
});

Deno.test("process_stop of a process that ended by itself says it had already ended", async () => {
  await withGate({ mode: "bypass", profile: ":danger-full-access" }, async (box) => {
    output(
      await box.call("bash", {
        command: "exit 3",
        run_in_background: true,
        ready_text: "never printed",
        timeout_ms: 60_000,
      }),
    );
    const stopped = output(await box.call("process_stop", { id: "p1" }));
    match(stopped, /^Already ended, nothing to stop: p1 exited \(exit code 3\)/);
    // Stopped once, a second stop does not stop it again either.
    output(
      await box.call("bash", { command: "exec sleep 30", run_in_background: true }),
    );
    match(output(await box.call("process_stop", { id: "p2" })), /^Stopped: p2 stopped/);
    match(
      output(await box.call("process_stop", { id: "p2" })),
      /^Already ended, nothing to stop: p2 stopped/,
    );
  });
});
