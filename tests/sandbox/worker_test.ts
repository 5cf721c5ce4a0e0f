/**
 * WorkerHost with real workers: the shared suite on the process backend, process-only checks
 * (environment, argv, audit, no process left), and the suite on the Worker backend, which
 * needs `--unstable-worker-options` and so runs in a child `deno test`.
 */
import { deepEqual, equal, notEqual, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import {
  failed,
  firstUpdate,
  NONE,
  REAL_HANDLER,
  succeeded,
  TEST_HANDLER,
  withBox,
  withHost,
  workerSuite,
} from "./_worker_suite.ts";
import { WorkerHost } from "../../src/sandbox/worker/host.ts";
import { workerRunArgs } from "../../src/sandbox/worker/flags.ts";
import { startProcessChannel, workerEnv } from "../../src/sandbox/worker/process_channel.ts";

workerSuite("process");

/** True while process `pid` exists (Deno reads /proc/<pid> only with --allow-all). */
function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** The argv of process `pid`, read by `cat` (Deno reads /proc/<pid> only with --allow-all). */
async function argvOf(pid: number): Promise<string[]> {
  const output = await new Deno.Command("cat", { args: [`/proc/${pid}/cmdline`] }).output();
  return new TextDecoder().decode(output.stdout).split("\0").slice(0, -1);
}

Deno.test("WorkerHost (process) passes no API key to the worker, even with env granted", async () => {
  await withBox(async (box) => {
    const env = { PATH: "/usr/bin:/bin", HOME: "/root", TERN_API_KEY: "sk-test-123", LANG: "C" };
    await withHost(box, { grants: { ...NONE, env: "all" }, env }, async (host) => {
      const seen = JSON.parse(succeeded(await host.call("env", {})));
      equal(seen.TERN_API_KEY, undefined);
      equal(seen.LANG, "C");
      ok(typeof seen.PATH === "string");
      ok(!JSON.stringify(seen).includes("sk-test-123"));
    });
  });
});

Deno.test("WorkerHost (process) flags are the exact argv of the worker process", async () => {
  await withBox(async (box) => {
    await withHost(box, {}, async (host) => {
      await host.start();
      deepEqual(await argvOf(host.pid!), host.flags);
      const cwd = await new Deno.Command("readlink", { args: [`/proc/${host.pid}/cwd`] }).output();
      equal(new TextDecoder().decode(cwd.stdout).trim(), box.ws);
      ok(host.flags.includes(`--allow-read=${box.ws}`));
      ok(!host.flags.some((flag) => flag.startsWith("--allow-ffi") || flag === "--allow-all"));
    });
  });
});

Deno.test("WorkerHost (process) replaces a worker killed from outside", async () => {
  await withBox(async (box) => {
    await withHost(box, {}, async (host) => {
      const started = firstUpdate();
      const waiting = host.call("wait", {}, started);
      await started.seen;
      const pid = host.pid!;
      Deno.kill(pid, "SIGKILL");
      const message = failed(await waiting, "EXECUTION_FAILED");
      ok(message.includes("killed by SIGKILL"), message);
      equal(succeeded(await host.call("count", {})), "1");
      notEqual(host.pid, pid);
      equal(alive(pid), false);
    });
  });
});

Deno.test("WorkerHost (process) kills the process of a call that hangs past its time", async () => {
  await withBox(async (box) => {
    await withHost(box, { cancelGraceMs: 50 }, async (host) => {
      await host.start();
      const pid = host.pid!;
      failed(await host.call("hang", {}, { timeoutMs: 50 }), "TIMEOUT");
      succeeded(await host.call("count", {}));
      notEqual(host.pid, pid);
      equal(alive(pid), false);
    });
  });
});

Deno.test("WorkerHost (process) close() and restart() leave no process behind", async () => {
  await withBox(async (box) => {
    const host = new WorkerHost({ grants: NONE, handlerUrl: TEST_HANDLER, workspace: box.ws });
    await host.start();
    const first = host.pid!;
    const started = firstUpdate();
    const waiting = host.call("wait", {}, started);
    await started.seen;
    host.restart({ ...NONE, read: [box.ws] });
    await host.start();
    const second = host.pid!;
    notEqual(second, first);
    // The retired worker still answers its call in flight.
    ok(alive(first));
    await host.close();
    failed(await waiting, "CANCELLED");
    equal(alive(first), false);
    equal(alive(second), false);
    equal(host.pid, null);
  });
});

Deno.test("WorkerHost (process) close() kills a worker still starting instead of waiting for it", async () => {
  await withBox(async (box) => {
    const host = new WorkerHost({ grants: NONE, handlerUrl: TEST_HANDLER, workspace: box.ws });
    const starting = host.start();
    const pid = host.pid!;
    ok(pid > 0);
    await host.close();
    // Stopped gracefully it would load, answer "ready" and exit by itself; killed, it never does.
    await rejects(starting, /killed by SIGKILL/);
    equal(alive(pid), false);
  });
});

Deno.test("WorkerHost (process) writes Deno's permission audit, one file per worker run", async () => {
  await withBox(async (box) => {
    await Deno.writeTextFile(join(box.ws, "a.txt"), "a\n");
    const auditFile = (run: number) => join(box.outside, `audit-${run}.jsonl`);
    await withHost(box, { handlerUrl: REAL_HANDLER, auditFile }, async (host) => {
      succeeded(await host.call("read", { path: "a.txt" }));
      equal(host.auditPath, auditFile(1));
      host.restart(host.grants);
      failed(
        await host.call("read", { path: "/etc/hostname" }, { workspace: "/etc" }),
        "POLICY_DENIED",
      );
      equal(host.auditPath, auditFile(2));
    });
    const first = Deno.readTextFileSync(auditFile(1)).trim().split("\n").map((line) =>
      JSON.parse(line)
    );
    ok(
      first.some((r) => r.permission === "read" && r.value === join(box.ws, "a.txt")),
      JSON.stringify(first),
    );
    const second = Deno.readTextFileSync(auditFile(2)).trim().split("\n").map((line) =>
      JSON.parse(line)
    );
    ok(second.some((r) => r.permission === "read" && String(r.value).startsWith("/etc")));
    ok(!second.some((r) => r.value === join(box.ws, "a.txt")));
  });
});

Deno.test("WorkerHost (process) reports a deno executable that cannot start", async () => {
  await withBox(async (box) => {
    await withHost(box, { denoPath: join(box.outside, "no-deno") }, async (host) => {
      const message = failed(await host.call("count", {}), "EXECUTION_FAILED");
      ok(message.startsWith('Cannot run "count": the tool worker could not be started'), message);
      await rejects(host.start(), /Cannot start the tool worker: it could not be started/);
    });
  });
});

Deno.test("WorkerHost (process) starts a worker again once when the first dies before it is ready", async () => {
  await withBox(async (box) => {
    // A deno that fails at start-up the first time only (as Deno can while another process
    // sets up a fresh module cache), then runs the real one.
    const marker = join(box.outside, "failed-once");
    const fake = join(box.outside, "flaky-deno");
    await Deno.writeTextFile(
      fake,
      `#!/bin/sh\nif [ ! -e ${marker} ]; then : > ${marker}; ` +
        `echo "error: No such file or directory (os error 2)" >&2; exit 1; fi\n` +
        `exec ${Deno.execPath()} "$@"\n`,
    );
    await Deno.chmod(fake, 0o755);
    await withHost(box, { denoPath: fake }, async (host) => {
      equal(succeeded(await host.call("count", {})), "1");
    });
  });
});

Deno.test("startProcessChannel() worker exits by itself when stdin ends, despite a hung call", async () => {
  await withBox(async (box) => {
    const updates: string[] = [];
    const channel = startProcessChannel({
      denoPath: Deno.execPath(),
      args: workerRunArgs({ grants: NONE, handlerUrl: TEST_HANDLER }),
      cwd: box.ws,
      env: workerEnv(Deno.env.toObject(), NONE),
    }, (message) => {
      if (message.type === "update") updates.push(message.text);
    });
    channel.send({ id: 1, type: "call", tool: "hang", args: {}, workspace: box.ws });
    // A long grace: only the worker's own exit (after its 2 s grace) ends it with code 0.
    await channel.stop(60_000);
    equal(await channel.ended, "exited with code 0");
    deepEqual(updates, ["started"]);
    equal(alive(channel.pid!), false);
  });
});

Deno.test("WorkerHost (worker) passes the suite in a deno test with --unstable-worker-options", async () => {
  const suite = new URL("./_worker_backend.ts", import.meta.url).pathname;
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "--unstable-worker-options",
      "--no-prompt",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      suite,
    ],
    env: { NO_COLOR: "1", TERN_API_KEY: "sk-test-123" },
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  ok(output.success, text);
  ok(/ok \| \d+ passed \| 0 failed/.test(text), text);
});

for (const signal of ["SIGKILL", "SIGTERM", "SIGHUP"] as const) {
  Deno.test(`WorkerHost (process) worker stuck in a loop dies when its host gets ${signal}`, async () => {
    const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-spin-" }));
    const host = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-env",
        "--allow-run",
        new URL("./_fixtures/spinning_host.ts", import.meta.url).pathname,
        workspace,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = host.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      let text = "";
      while (!text.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      const pid = Number(text.trim());
      ok(pid > 0 && alive(pid), `no spinning worker: "${text}"`);
      host.kill(signal);
      await host.status;
      for (let i = 0; i < 600 && alive(pid); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      ok(!alive(pid), `worker ${pid} outlived its host`);
    } finally {
      await reader.cancel().catch(() => {});
      try {
        host.kill("SIGKILL");
      } catch {
        // Gone already.
      }
      await host.status;
      await Deno.remove(workspace, { recursive: true });
    }
  });
}
