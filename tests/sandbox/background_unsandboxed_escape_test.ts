/**
 * A background process run without a sandbox that starts a process in a session of its own
 * (`setsid`): the process ends with it, on `process_stop` and when it ends by itself, where a
 * cgroup can be made (the containment the unsandboxed commands use). Real processes.
 */
import { equal, ok } from "node:assert/strict";
import { assertNoProcessWith, killWith, marker } from "./_bwrap_helpers.ts";
import { ProcessSupervisor } from "../../src/sandbox/background.ts";
import { unsandboxedLaunch } from "../../src/sandbox/background_launch.ts";
import { findContainment } from "../../src/sandbox/containment.ts";

const containment = await findContainment();

function supervisor(): ProcessSupervisor {
  const launch = (command: string, options: { cwd: string; port?: number; token: string }) =>
    Promise.resolve(
      unsandboxedLaunch({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" }, command, {
        ...options,
        containment,
      }),
    );
  return new ProcessSupervisor({ launch, launchUnsandboxed: launch, graceMs: 50 });
}

/** A command that starts `sleep <mark>` in a session of its own, says so, then `then`. */
const command = (mark: string, then: string) =>
  `setsid sleep ${mark} </dev/null >/dev/null 2>&1 & ` +
  `until pgrep -f "^sleep ${mark}" >/dev/null; do sleep 0.02; done; echo escaped; ${then}`;

for (
  const [how, then, end] of [
    ["is stopped", "sleep 300", (p: ProcessSupervisor, id: string) => p.control(true).stop(id)],
    ["ends by itself", "exit 0", async (p: ProcessSupervisor, id: string) => {
      for (let tries = 0; tries < 400 && p.control(true).info(id).state !== "exited"; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }],
  ] as const
) {
  Deno.test({
    name: `an unsandboxed background process's setsid child ends when the process ${how}`,
    // Only where commands get a cgroup each (this machine's CI does); SECURITY.md says the rest.
    ignore: containment.kind !== "cgroup",
    fn: async () => {
      const processes = supervisor();
      const mark = marker();
      const dir = await Deno.makeTempDir({ prefix: "tern-bg-escape-" });
      try {
        const started = await processes.control(true).start(command(mark, then), {
          cwd: dir,
          text: "escaped",
        });
        equal(await processes.control(true).wait(started.id, { timeoutMs: 20_000 }), "ready");
        await end(processes, started.id);
        const info = processes.control(true).info(started.id);
        ok(info.state === "stopped" || info.state === "exited", info.state);
        // Before: the setsid sleep outlived the process (and tern).
        await assertNoProcessWith(`sleep ${mark}`);
      } finally {
        await processes.close();
        await killWith(`sleep ${mark}`);
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
