/**
 * Resource limits of shell commands, through the sandbox the agent opens: each command that
 * tries to take the machine down is stopped at its limit, and the host is left as it was.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ResourceLimits } from "../../src/config/schema.ts";
import type { SandboxRuntime } from "../../src/sandbox/runtime.ts";
import { bwrapTest, withTestSandbox } from "./_bwrap_helpers.ts";

/** Small limits, so that each case reaches its limit fast. */
const LIMITS: ResourceLimits = {
  processes: 64,
  memoryMb: 256,
  totalMemoryMb: 512,
  cpuSeconds: 1,
  fileSizeMb: 16,
  tmpMb: 8,
  toolSeconds: 120,
};

/** Generous: a command that is not stopped by its limit ends on its own long before. */
const TIMEOUT_MS = 120_000;

function withSandbox(
  fn: (sandbox: SandboxRuntime, ws: string) => Promise<void>,
  limits: ResourceLimits = LIMITS,
): Promise<void> {
  return withTestSandbox({ name: "lim", limits }, async (sandbox, ws) => {
    equal(sandbox.shellKind, "bwrap");
    await fn(sandbox, ws);
  });
}

function run(sandbox: SandboxRuntime, ws: string, command: string) {
  return sandbox.shell(command, { cwd: ws, timeoutMs: TIMEOUT_MS });
}

/** Forks children that wait, until a fork fails or 400 are running; prints how many started. */
const FORKER = `
import os, time
started = 0
for _ in range(400):
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        started += 1
    except OSError as error:
        print("fork failed:", error.strerror)
        break
print("started", started)
`;

bwrapTest("bwrap runner stops a command's forks at the process limit", async () => {
  await withSandbox(async (sandbox, ws) => {
    const result = await run(sandbox, ws, `/usr/bin/python3 -c '${FORKER}'`);
    match(result.output, /fork failed: Resource temporarily unavailable/);
    const started = Number(result.output.match(/started (\d+)/)?.[1]);
    ok(started > 0 && started < LIMITS.processes, result.output);
    equal(result.timedOut, false);
  });
});

bwrapTest(
  "the process limit holds for every command of a warm shell, not only its first",
  async () => {
    await withSandbox(async (sandbox, ws) => {
      // Commands one after another share the warm shell, whose server joined the pids cgroup
      // once: each command it forks must be capped all the same.
      for (let i = 0; i < 3; i++) {
        const result = await run(sandbox, ws, `/usr/bin/python3 -c '${FORKER}'`);
        match(result.output, /fork failed: Resource temporarily unavailable/, `command ${i}`);
        const started = Number(result.output.match(/started (\d+)/)?.[1]);
        ok(started > 0 && started < LIMITS.processes, `command ${i}: ${result.output}`);
      }
    });
  },
);

bwrapTest(
  "the process limit holds for a one-shot sandbox started while the warm shell is busy",
  async () => {
    await withSandbox(async (sandbox, ws) => {
      // The first command holds the warm shell; the second runs in a sandbox of its own, whose
      // shell joins the pids cgroup itself.
      const holding = run(sandbox, ws, "sleep 1; echo held");
      await new Promise((resolve) => setTimeout(resolve, 200));
      const result = await run(sandbox, ws, `/usr/bin/python3 -c '${FORKER}'`);
      match(result.output, /fork failed: Resource temporarily unavailable/);
      const started = Number(result.output.match(/started (\d+)/)?.[1]);
      ok(started > 0 && started < LIMITS.processes, result.output);
      equal((await holding).output, "held\n");
    });
  },
);

bwrapTest("bwrap runner survives a fork bomb, which dies with its command", async () => {
  await withSandbox(async (sandbox, ws) => {
    // The bomb runs while the shell counts processes with builtins only (no fork needed).
    const command = "bomb() { bomb | bomb & }; bomb; shopt -s nullglob; " +
      "for i in {1..300000}; do :; done; p=(/proc/[0-9]*); echo processes=${#p[@]}";
    const result = await run(sandbox, ws, command);
    const count = Number(result.output.match(/processes=(\d+)/)?.[1]);
    ok(count > 1 && count <= LIMITS.processes + 1, result.output.slice(0, 500));
    // The next command runs as usual: nothing of the bomb is left in the way.
    const after = await run(sandbox, ws, "echo alive");
    equal(after.output, "alive\n");
  }, { ...LIMITS, cpuSeconds: 60 });
});

bwrapTest("bwrap runner stops a memory hog at the memory limit", async () => {
  await withSandbox(async (sandbox, ws) => {
    const hog = `/usr/bin/python3 -c 'x = bytearray(1024 * 1024 * 1024); print("allocated")'`;
    const result = await run(sandbox, ws, hog);
    match(result.output, /MemoryError/);
    ok(!result.output.includes("allocated"), result.output);
    ok(result.code !== 0);
  });
});

/**
 * Writes `mb` MiB page by page (each below the per-process limit), prints `label`, holds it for
 * `seconds`, then prints `<label>-end`: a process the kernel killed meanwhile prints no end.
 */
function holder(mb: number, seconds: number, label: string): string {
  return `/usr/bin/python3 -c 'import time; x = b"\\1" * (${mb} << 20); print("${label}", flush=True); ` +
    `time.sleep(${seconds}); print("${label}-end", flush=True)'`;
}

bwrapTest(
  "the memory of all a run's commands together stops at totalMemoryMb (as root)",
  async () => {
    await withSandbox(async (sandbox, ws) => {
      const caps = sandbox.explain().layers?.cgroups;
      if (caps?.memoryMb === undefined) return; // Not root: no memory cgroup can be made.
      equal(caps.memoryMb, LIMITS.totalMemoryMb);
      // Four processes of 200 MiB, each within the per-process 256 MiB: 800 MiB together, over
      // the run's 512 MiB, so the kernel kills some of them, not tern and not the shell.
      const four = [1, 2, 3, 4].map((n) => `${holder(200, 3, `held${n}`)} &`).join(" ");
      const result = await run(sandbox, ws, `${four} wait; echo done`);
      const held = result.output.match(/^held\d-end$/gm) ?? [];
      ok(held.length >= 1 && held.length <= 2, result.output);
      match(result.output, /done\n$/);
      // The next command runs as usual, with the memory of the last one given back.
      equal((await run(sandbox, ws, `${holder(200, 0, "again")}`)).output, "again\nagain-end\n");
      // A command that fails for the cap is told so: two of 150 MiB in the background and the
      // largest, killed, in the foreground.
      const killed = await run(
        sandbox,
        ws,
        `${holder(150, 3, "b1")} & ${holder(150, 3, "b2")} & sleep 0.5; ${holder(240, 3, "fg")}`,
      );
      ok(killed.code !== 0, killed.output);
      match(killed.output, /reached their memory cap of 512 MiB \(limits\.totalMemoryMb\)/);
      // A later failure with no new kill says nothing of the cap.
      const failed = await run(sandbox, ws, "exit 3");
      equal(failed.code, 3);
      ok(!failed.output.includes("memory cap"), failed.output);
    });
  },
);

bwrapTest(
  "a background process's memory counts against the run's cap for later commands (as root)",
  async () => {
    await withSandbox(async (sandbox, ws) => {
      if (sandbox.explain().layers?.cgroups.memoryMb === undefined) return; // Not root.
      const control = sandbox.processes.control(false);
      const info = await control.start(holder(200, 60, "bg-held"), { cwd: ws, text: "bg-held" });
      equal(await control.wait(info.id, { timeoutMs: TIMEOUT_MS }), "ready");
      // 200 MiB held in the background and 200 + 200 MiB in the foreground: over 512 MiB.
      const result = await run(
        sandbox,
        ws,
        `${holder(200, 2, "fg1")} & ${holder(200, 2, "fg2")} & wait; echo done`,
      );
      // The kernel kills whichever of the three it picks: at most two of them held.
      const foreground = (result.output.match(/^fg\d-end$/gm) ?? []).length;
      const background = ["running", "ready"].includes(control.info(info.id).state) ? 1 : 0;
      ok(foreground + background <= 2, `${result.output}\nbackground ${background}`);
      await control.stop(info.id);
      // With the background process gone, two fit again.
      const after = await run(
        sandbox,
        ws,
        `${holder(200, 1, "a")} & ${holder(200, 1, "b")} & wait`,
      );
      equal([...after.output.matchAll(/^[ab]-end$/gm)].length, 2, after.output);
    });
  },
);

/**
 * One line per process the sandbox shows: its pid, its memory cgroup and its data rlimit. Only
 * builtins and `read`, so the survey itself starts no process that would join late.
 */
const SURVEY = 'for p in /proc/[0-9]*; do n=${p##*/}; m=""; d=""; ' +
  'while IFS= read -r l; do case "$l" in *:memory:*) m="${l##*:}" ;; esac; done <"$p/cgroup"; ' +
  'while IFS= read -r l; do case "$l" in "Max data size"*) d="$l" ;; esac; done <"$p/limits"; ' +
  'd="${d#Max data size}"; d="${d#"${d%%[! ]*}"}"; d="${d%% *}"; echo "proc $n $m $d"; done';

function surveyed(output: string): { pid: string; memory: string; data: string }[] {
  return [...output.matchAll(/^proc (\d+) (\S*) (\S*)$/gm)].map(([, pid, memory, data]) => ({
    pid,
    memory,
    data,
  }));
}

bwrapTest(
  "every process of a sandbox, its init and watchdog included, is in the run's cgroups and rlimits (as root)",
  async () => {
    await withSandbox(async (sandbox, ws) => {
      if (sandbox.explain().layers?.cgroups.memoryMb === undefined) return; // Not root.
      const data = String(LIMITS.memoryMb * 1024 * 1024);
      // A one-shot sandbox started with tern's liveness pipe (a background process): bubblewrap's
      // init and the liveness watchdog run beside the command.
      const control = sandbox.processes.control(false);
      const info = await control.start(`sleep 0.3; ${SURVEY}; echo survey-done`, { cwd: ws });
      equal(await control.wait(info.id, { timeoutMs: TIMEOUT_MS }), "exited");
      const lines = control.logs(info.id, { tail: 200 }).lines.join("\n");
      ok(lines.includes("survey-done"), lines);
      // The warm shell: its server is the namespace's init.
      const warm = (await run(sandbox, ws, SURVEY)).output;
      for (const output of [lines, warm]) {
        const processes = surveyed(output);
        ok(processes.some((process) => process.pid === "1"), output);
        // Inside its cgroup namespace a sandbox sees the cgroup it was started in as `/`: every
        // process there, not one in tern's own cgroup with the command in a child of it.
        for (const process of processes) {
          equal(process.memory, "/", `not in the cgroup the sandbox started in: ${output}`);
          equal(process.data, data, `without the data rlimit: ${output}`);
        }
      }
    });
  },
);

bwrapTest(
  "the tool worker runs in the run's memory and pids cgroups, as commands do (as root)",
  async () => {
    await withSandbox(async (sandbox, ws) => {
      if (sandbox.explain().layers?.cgroups.memoryMb === undefined) return; // Not root.
      await Deno.writeTextFile(join(ws, "a.txt"), "a\n");
      const signal = new AbortController().signal;
      const read = await sandbox.worker!.call("read", { path: "a.txt" }, { signal });
      equal(read.status, "SUCCEEDED", JSON.stringify(read));
      // The worker's Deno, found from the host by its handler and this workspace in its flags
      // (through bash: Deno reads another process's /proc files only with --allow-all).
      const script = 'for p in $(pgrep -f "worker_handle[r][.]ts"); do ' +
        'a="$(tr "\\0" " " </proc/$p/cmdline)"; case "$a" in *"$1"*) ;; *) continue ;; esac; ' +
        'case "${a%% *}" in */deno) ;; *) continue ;; esac; ' +
        'echo "worker $p"; cat /proc/$p/cgroup; done';
      const found = await new Deno.Command("bash", {
        args: ["-c", script, "bash", ws],
        stdout: "piped",
      }).output();
      const text = new TextDecoder().decode(found.stdout);
      equal(text.match(/^worker /gm)?.length, 1, text);
      for (const controller of ["memory", "pids"]) {
        const line = text.split("\n").find((l) => l.split(":")[1]?.split(",").includes(controller));
        ok(line !== undefined, text);
        // The run's cgroup: a `tern-…` folder (made inside tern's own cgroup).
        match(line.split(":").slice(2).join(":"), /\/tern-[0-9a-f]{8}-[^/]+$/, text);
      }
    });
  },
);

bwrapTest("bwrap runner kills a CPU loop at the CPU time limit", async () => {
  await withSandbox(async (sandbox, ws) => {
    const result = await run(sandbox, ws, "while :; do :; done");
    equal(result.timedOut, false);
    // SIGXCPU (24) at the soft limit, or SIGKILL (9) at the hard one (they are the same).
    ok([128 + 24, 128 + 9].includes(result.code), `exit code ${result.code}`);
  });
});

bwrapTest("bwrap runner stops a 2 GB file write at the file size limit", async () => {
  await withSandbox(async (sandbox, ws) => {
    const result = await run(sandbox, ws, "head -c 2G /dev/zero > big.bin; echo code=$?");
    match(result.output, /File size limit exceeded/);
    ok(!result.output.includes("code=0"), result.output);
    const size = (await Deno.stat(join(ws, "big.bin"))).size;
    ok(size <= LIMITS.fileSizeMb * 1024 * 1024, `big.bin has ${size} bytes`);
  });
});

bwrapTest(
  "bwrap runner's /dev/shm and /run fill up at their size, and /dev takes no files",
  async () => {
    // Every tmpfs takes memory: without a size each could grow to half of the machine's.
    await withSandbox(async (sandbox, ws) => {
      const command = [
        "head -c 64M /dev/zero > /dev/shm/fill; stat -c shm=%s /dev/shm/fill",
        "head -c 64M /dev/zero > /run/fill; stat -c run=%s /run/fill",
        "touch /dev/fill 2>/dev/null || echo dev-refused",
        "echo x > /dev/null && echo null-ok",
      ].join("; ");
      const result = await run(sandbox, ws, command);
      const shm = Number(result.output.match(/shm=(\d+)/)?.[1]);
      const runSize = Number(result.output.match(/run=(\d+)/)?.[1]);
      ok(shm > 0 && shm <= LIMITS.tmpMb * 1024 * 1024, result.output);
      ok(runSize > 0 && runSize <= 16 * 1024 * 1024, result.output);
      match(result.output, /dev-refused/);
      match(result.output, /null-ok/);
    }, { ...LIMITS, fileSizeMb: 1024 });
  },
);

bwrapTest("bwrap runner's /tmp fills up at its size, and the host's does not", async () => {
  await withSandbox(async (sandbox, ws) => {
    const mark = `tern_fill_${crypto.randomUUID()}`;
    const command =
      `head -c 64M /dev/zero > /tmp/${mark}; echo code=$?; stat -c size=%s /tmp/${mark}`;
    const result = await run(sandbox, ws, command);
    match(result.output, /No space left on device/);
    const size = Number(result.output.match(/size=(\d+)/)?.[1]);
    ok(size <= LIMITS.tmpMb * 1024 * 1024, result.output);
    // Nothing of it reached the host: neither its /tmp nor the run's private tmp folder.
    ok(!(await exists(`/tmp/${mark}`)));
    ok(!(await exists(join(sandbox.explain().tmp, mark))));
    // The next command gets a fresh /tmp (one-shot sandbox) or this one's (warm shell, as in a
    // shell session): either way the cap holds, and removing the file gives the space back.
    const next = await run(
      sandbox,
      ws,
      `rm -f /tmp/${mark}; head -c 4M /dev/zero > /tmp/${mark} && stat -c size=%s /tmp/${mark}`,
    );
    equal(next.output, `size=${4 * 1024 * 1024}\n`);
  }, { ...LIMITS, fileSizeMb: 1024 });
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
