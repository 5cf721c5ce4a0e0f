import { deepEqual, equal, ok, throws } from "node:assert/strict";
import {
  signalProcessGroup,
  spawnProcessGroup,
  terminateProcessGroup,
} from "../../src/core/process_group.ts";

const decoder = new TextDecoder();

/** Fields 1, 5 and 6 of `/proc/<pid>/stat` as the process itself printed them: pid, pgrp, session. */
function idsOf(stat: string): number[] {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return [Number(stat.split(" ")[0]), Number(fields[2]), Number(fields[3])];
}

Deno.test("spawnProcessGroup() starts the program as the leader of a new session and group", async () => {
  const child = spawnProcessGroup("cat", { args: ["/proc/self/stat"], stdout: "piped" });
  const out = await child.output();
  ok(out.success);
  deepEqual(idsOf(decoder.decode(out.stdout)), [child.pid, child.pid, child.pid]);
  ok(Deno.pid !== child.pid);
});

Deno.test("spawnProcessGroup() passes arguments, cwd and the environment unchanged", async () => {
  const cwd = await Deno.realPath(await Deno.makeTempDir());
  try {
    const out = await spawnProcessGroup("bash", {
      args: ["-c", 'printf "%s|%s|%s|%s" "$1" "$PWD" "$ONLY" "${HOME-unset}"', "x", "a b"],
      cwd,
      env: { ONLY: "yes", PATH: "/usr/bin:/bin" },
      clearEnv: true,
      stdout: "piped",
    }).output();
    equal(decoder.decode(out.stdout), `a b|${cwd}|yes|unset`);
  } finally {
    await Deno.remove(cwd);
  }
});

Deno.test("spawnProcessGroup() throws NotFound for a program missing on the given PATH", () => {
  throws(
    () => spawnProcessGroup("tern-no-such-program", { env: { PATH: "/usr/bin:/bin" } }),
    Deno.errors.NotFound,
  );
  throws(() => spawnProcessGroup("/nonexistent/prog"), Deno.errors.NotFound);
  // bash is on /usr/bin, not on this PATH: the lookup uses the child's PATH, as a spawn does.
  throws(
    () => spawnProcessGroup("bash", { env: { PATH: "/nonexistent" }, clearEnv: true }),
    Deno.errors.NotFound,
  );
});

Deno.test("signalProcessGroup() stops a group signalled the moment it was started", async () => {
  // Before `setsid` has run there is no group with the leader's id yet: the signal must still
  // land, or a cancel right after the start would leave the command running.
  for (let i = 0; i < 40; i++) {
    const child = spawnProcessGroup("bash", {
      args: ["-c", "sleep 30 & sleep 30"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    });
    ok(signalProcessGroup(child.pid, "SIGKILL"), `run ${i}: the signal reached nothing`);
    const status = await child.status;
    equal(status.signal, "SIGKILL", `run ${i}`);
    // Anything it started in between goes with the group.
    signalProcessGroup(child.pid, "SIGKILL");
  }
});

Deno.test("terminateProcessGroup() ends the leader and its background children", async () => {
  const child = spawnProcessGroup("bash", {
    args: ["-c", "trap '' TERM; sleep 30 & echo $!; wait"],
    stdin: "null",
    stdout: "piped",
  });
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let line = "";
  while (!line.includes("\n")) line += (await reader.read()).value ?? "";
  const sleeper = Number(line.trim());
  await terminateProcessGroup(child.pid, child.status, 100);
  await child.status;
  await reader.cancel();
  // The sleeper was in the group: it is gone (or a zombie being reaped by init).
  let state = "";
  try {
    state = (await Deno.readTextFile(`/proc/${sleeper}/stat`)).split(") ")[1]?.[0] ?? "";
  } catch {
    state = "gone";
  }
  ok(state === "gone" || state === "Z", `the background child is ${state}`);
});

Deno.test("signalProcessGroup() never signals a leader that has exited", async () => {
  const child = spawnProcessGroup("true");
  await child.status;
  equal(signalProcessGroup(child.pid, "SIGKILL"), false);
});
