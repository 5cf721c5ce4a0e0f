/**
 * A process run without a sandbox that ignores SIGTERM, being stopped (`process_stop`, a
 * command's cancel or timeout) when tern dies: the stop's SIGTERM reaches the whole process
 * group, the liveness watchdog included. Were the watchdog to die of it, a tern killed before
 * the SIGKILL that ends the grace would leave the process running for ever.
 */
import { dirname } from "node:path";
import { assertNoProcessWith, marker } from "./_bwrap_helpers.ts";
import { bwrapNeed } from "../support/needs.ts";

const helpersUrl = new URL("./_bwrap_helpers.ts", import.meta.url).href;

/**
 * Runs `stopping` (which starts `command`, then begins to stop it) in a tern of its own, kills
 * that tern by SIGKILL within the stop's grace, and checks nothing of `command` is left.
 */
async function killedWhileStopping(mark: string, stopping: string): Promise<void> {
  const code = `
    import { withTestSandbox } from ${JSON.stringify(helpersUrl)};
    await withTestSandbox({ name: "bg_grace" }, async (sandbox, ws) => {
      console.log("ws " + ws);
      ${stopping}
      // Within the half second of grace between the stop's SIGTERM and its SIGKILL.
      await new Promise((resolve) => setTimeout(resolve, 100));
      console.log("stopping");
      await new Promise(() => setInterval(() => {}, 1000));
    });
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", code],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("stopping\n")) seen += (await reader.read()).value ?? "";
  const ws = seen.match(/^ws (.*)$/m)?.[1] ?? "";
  try {
    child.kill("SIGKILL");
    await child.status;
    await assertNoProcessWith(mark);
  } finally {
    await reader.cancel();
    // What a failure left must not outlive the test: each of its processes, by pid.
    for (const pid of await pidsWith(mark)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    if (ws !== "") await Deno.remove(dirname(ws), { recursive: true }).catch(() => {});
  }
}

/** The pids of the live processes whose command line holds `text`. */
async function pidsWith(text: string): Promise<number[]> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pid=,args="] }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .filter((line) => line.includes(text))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Ignores SIGTERM: the loop's own `sleep`s die of it, the loop goes on. */
function stubborn(mark: string): string {
  return `trap '' TERM; echo up; while :; do sleep 0.05; done # ${mark}`;
}

Deno.test({
  name: "a background process without a sandbox that ignores SIGTERM dies with a tern killed " +
    "while process_stop waits",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    const mark = marker();
    await killedWhileStopping(
      mark,
      `const control = sandbox.processes.control(true);
      const info = await control.start(${JSON.stringify(stubborn(mark))}, { cwd: ws });
      await control.wait(info.id, { timeoutMs: 200 });
      void control.stop(info.id);`,
    );
  },
});

Deno.test({
  name: "a command without a sandbox that ignores SIGTERM dies with a tern killed while its " +
    "cancel waits",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    const mark = marker();
    await killedWhileStopping(
      mark,
      `const cancel = new AbortController();
      let up = () => {};
      const started = new Promise((resolve) => up = resolve);
      void sandbox.unsandboxedShell(${JSON.stringify(stubborn(mark))}, {
        cwd: ws,
        signal: cancel.signal,
        onOutput: (text) => text.includes("up") && up(),
      });
      await started;
      cancel.abort();`,
    );
  },
});
