/**
 * `bash` with `run_in_background` and the process tools, through the real permission gate,
 * bubblewrap and a real server: readiness by port and by log text, logs, stop, the loopback of
 * `:workspace`, the gate's rules and audit, the caps, and nothing left when tern is killed.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { dirname, join } from "node:path";
import { withGate } from "../agent/_gate_box.ts";
import { assertNoProcessWith, marker, processesWith } from "../sandbox/_bwrap_helpers.ts";
import { bwrapNeed } from "../support/needs.ts";
import { MAX_PROCESSES } from "../../src/sandbox/background.ts";
import type { Observation } from "../../src/core/observation.ts";

const ignore = !bwrapNeed.ok;

function port(): number {
  return 20_000 + crypto.getRandomValues(new Uint16Array(1))[0] % 20_000;
}

function output(obs: Observation): string {
  equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
  return obs.status === "SUCCEEDED" ? obs.output : "";
}

Deno.test({
  name: "bash run_in_background starts a real server in its own sandbox, waits for its port, " +
    "and process_stop ends it",
  ignore,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const p = port();
      const started = output(
        await box.call("bash", {
          command: `exec python3 -m http.server ${p} --bind 127.0.0.1`,
          run_in_background: true,
          ready_port: p,
          timeout_ms: 120_000,
        }),
      );
      match(started, /^Started p1; it is ready\np1 ready, ready on port \d+: exec python3/);
      match(output(await box.call("process_list", {})), new RegExp(`^p1 ready.*http.server ${p}`));
      const servers = (await processesWith(`http.server ${p}`)).filter((args) =>
        args.startsWith("python3")
      );
      equal(servers.length, 1, servers.join("\n"));
      // Under :workspace it listens on its own loopback: a later command has another one.
      const probe = output(
        await box.call("bash", {
          command: `curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${p}/`,
        }),
      );
      match(probe, /^000\nexit code: 7$/);
      match(output(await box.call("process_stop", { id: "p1" })), /^Stopped: p1 stopped/);
      await assertNoProcessWith(`http.server ${p}`);
      // Every call went through the gate and into the audit log like any bash command.
      const start = box.audit.find((record) => record.tool === "bash");
      deepEqual(
        [
          start?.decision,
          start?.sandbox,
          (start?.args as { run_in_background?: boolean })
            ?.run_in_background,
        ],
        ["allow", "bwrap", true],
      );
      deepEqual(box.audit.map((record) => record.tool), [
        "bash",
        "process_list",
        "bash",
        "process_stop",
      ]);
    }),
});

Deno.test({
  name: "bash run_in_background waits for a log text; process_logs tails and greps the log",
  ignore,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const p = port();
      const mark = `probe-${marker().replace(".", "")}`;
      // The server's own namespace reaches it: the command requests a page from itself.
      const command = `python3 -u -m http.server ${p} --bind 127.0.0.1 & ` +
        `until curl -s -o /dev/null http://127.0.0.1:${p}/${mark}; do sleep 0.1; done; ` +
        "echo requested; wait";
      const started = output(
        await box.call("bash", {
          command,
          run_in_background: true,
          ready_text: `GET /${mark}`,
          timeout_ms: 120_000,
        }),
      );
      match(started, /^Started p1; it is ready\n/);
      const grep = output(
        await box.call("process_logs", { id: "p1", grep: mark.toUpperCase() }),
      );
      match(grep, new RegExp(`^p1 ready, ready on text .*\\n.*"GET /${mark} HTTP/1.1" 404`));
      equal(grep.split("\n").length, 2, grep);
      const tail = output(await box.call("process_logs", { id: "p1", lines: 1 }));
      equal(tail.split("\n").length, 2, tail);
      const missing = await box.call("process_logs", { id: "p9" });
      ok(missing.status === "ERROR" && missing.code === "NOT_FOUND", JSON.stringify(missing));
    }),
});

Deno.test({
  name: "bash run_in_background is held to the rules and review of bash",
  ignore,
  fn: () =>
    withGate({
      mode: "bypass",
      rules: [{ action: "deny", command: "python3", reason: "no servers" }],
    }, async (box) => {
      const denied = await box.call("bash", {
        command: "python3 -m http.server 8000",
        run_in_background: true,
      });
      ok(denied.status === "ERROR" && denied.code === "POLICY_DENIED", JSON.stringify(denied));
      match(denied.message, /no servers/);
      equal(output(await box.call("process_list", {})), "No background processes");
    }).then(() =>
      // In ask mode without a person a start is refused, as the same command would be.
      withGate({ mode: "ask" }, async (box) => {
        const asked = await box.call("bash", {
          command: "python3 -m http.server 8000",
          run_in_background: true,
        });
        ok(asked.status === "ERROR" && asked.code === "POLICY_DENIED", JSON.stringify(asked));
        equal(output(await box.call("process_list", {})), "No background processes");
      })
    ),
});

Deno.test({
  name: "ProcessSupervisor refuses more than MAX_PROCESSES and closing the sandbox stops them all",
  ignore,
  fn: async () => {
    const mark = marker();
    await withGate({ mode: "bypass" }, async (box) => {
      const control = box.runtime.processes.control(false);
      for (let i = 0; i < MAX_PROCESSES; i++) {
        await control.start(`sleep ${mark}`, { cwd: box.ws });
      }
      await rejects(control.start(`sleep ${mark}`, { cwd: box.ws }), RangeError);
      while ((await processesWith(`sleep ${mark}`)).length < MAX_PROCESSES) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    await assertNoProcessWith(`sleep ${mark}`);
  },
});

const helpersUrl = new URL("../sandbox/_bwrap_helpers.ts", import.meta.url).href;

for (const signal of ["SIGKILL", "SIGHUP"] as const) {
  Deno.test({
    name: `background processes die with tern when it gets ${signal}, in and out of bubblewrap`,
    ignore,
    fn: () => killTern(signal),
  });
}

async function killTern(signal: Deno.Signal): Promise<void> {
  const mark = marker();
  const code = `
      import { withTestSandbox } from ${JSON.stringify(helpersUrl)};
      await withTestSandbox({ name: "bg_kill" }, async (sandbox, ws) => {
        await sandbox.processes.control(false).start("sleep ${mark}; echo a", { cwd: ws });
        await sandbox.processes.control(true).start("sleep ${mark}; echo b", { cwd: ws });
        console.log("ws " + ws);
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
  while (!seen.includes("\n")) seen += (await reader.read()).value ?? "";
  const ws = seen.match(/^ws (.*)$/m)?.[1] ?? "";
  try {
    while ((await processesWith(`sleep ${mark}`)).length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill(signal);
    await child.status;
    await assertNoProcessWith(`sleep ${mark}`);
  } finally {
    await reader.cancel();
    if (ws !== "") await Deno.remove(dirname(ws), { recursive: true }).catch(() => {});
  }
}

Deno.test({
  name: "a file that runs code on the host, changed by a background process between calls, " +
    "is reported with the next call",
  ignore,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      output(
        await box.call("bash", {
          command: "until [ -e go ]; do sleep 0.1; done; echo 'eval x' > .envrc",
          run_in_background: true,
        }),
      );
      await Deno.writeTextFile(join(box.ws, "go"), "");
      const control = box.runtime.processes.control(false);
      equal(await control.wait("p1", { timeoutMs: 120_000 }), "exited");
      output(await box.call("write", { path: "notes.txt", content: "x" }));
      const record = box.audit.at(-1);
      equal(record?.tool, "write");
      deepEqual(record?.hostFiles?.map((change) => change.path), [join(box.ws, ".envrc")]);
    }),
});

Deno.test({
  name: "under :external a background server shares the host's loopback with later commands",
  ignore,
  fn: () =>
    withGate({ mode: "bypass", profile: ":external" }, async (box) => {
      const p = port();
      await Deno.writeTextFile(join(box.ws, "page.txt"), "served from the sandbox\n");
      output(
        await box.call("bash", {
          command: `exec python3 -m http.server ${p} --bind 127.0.0.1`,
          run_in_background: true,
          ready_port: p,
          timeout_ms: 120_000,
        }),
      );
      const page = output(
        await box.call("bash", { command: `curl -s http://127.0.0.1:${p}/page.txt` }),
      );
      equal(page, "served from the sandbox\nexit code: 0");
      output(await box.call("process_stop", { id: "p1" }));
    }),
});

Deno.test({
  name: "a cancelled wait for readiness stops the background process",
  ignore,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const mark = marker();
      const controller = new AbortController();
      const call = box.tools.get("bash")!.run(
        { command: `sleep ${mark}`, run_in_background: true, ready_port: port() },
        { workspace: box.ws, signal: controller.signal },
      );
      while ((await processesWith(`sleep ${mark}`)).length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      controller.abort();
      const obs = await call;
      ok(obs.status === "ERROR" && obs.code === "CANCELLED", JSON.stringify(obs));
      await assertNoProcessWith(`sleep ${mark}`);
      match(output(await box.call("process_list", {})), /^p1 stopped \(exit code \d+\)/);
    }),
});

Deno.test({
  name: "a background process that ends by itself is told with the next tool result, once",
  ignore,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      output(
        await box.call("bash", {
          command: "until [ -e go ]; do sleep 0.1; done; exit 3",
          run_in_background: true,
        }),
      );
      const ended = new Promise<void>((resolve) => {
        const stop = box.runtime.processes.onChange(() => {
          if (box.runtime.processes.list()[0]?.state !== "exited") return;
          stop();
          resolve();
        });
      });
      await Deno.writeTextFile(join(box.ws, "go"), "");
      await ended;
      const next = output(await box.call("read", { path: "go" }));
      match(next, /\n\n\[Background processes: p1 ended by itself \(exit code 3\)\]$/);
      const after = output(await box.call("read", { path: "go" }));
      ok(!after.includes("Background processes"), after);
    }),
});

Deno.test("bash run_in_background under :danger-full-access says it runs without a sandbox", async () => {
  await withGate({ mode: "bypass", profile: ":danger-full-access" }, async (box) => {
    const started = output(
      await box.call("bash", { command: "echo up; sleep 30", run_in_background: true }),
    );
    match(started, /^Started p1\np1 running, no sandbox: echo up; sleep 30\n/);
    match(output(await box.call("process_stop", { id: "p1" })), /^Stopped: p1 stopped/);
  });
});

Deno.test("bash run_in_background without a sandbox: a `wait` in the command returns", async () => {
  await withGate({ mode: "bypass", profile: ":danger-full-access" }, async (box) => {
    const ended = new Promise<void>((resolve) => {
      const stop = box.runtime.processes.onChange(() => {
        if (box.runtime.processes.list()[0]?.state !== "exited") return;
        stop();
        resolve();
      });
    });
    // The watchdog that ends the group with tern is no job of the command's shell.
    output(
      await box.call("bash", { command: "sleep 0.2 & wait; echo waited", run_in_background: true }),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) =>
      timer = setTimeout(() => resolve("late"), 20_000)
    );
    const outcome = await Promise.race([ended, late]);
    clearTimeout(timer);
    if (outcome === "late") output(await box.call("process_stop", { id: "p1" }));
    equal(outcome, undefined, "the command's wait never returned");
    match(output(await box.call("process_logs", { id: "p1" })), /waited/);
  });
});

Deno.test("bash without a sandbox: a `wait` in the command returns", async () => {
  await withGate({ mode: "bypass", profile: ":danger-full-access" }, async (box) => {
    const done = output(
      await box.call("bash", { command: "sleep 0.2 & wait; echo waited", timeout_ms: 20_000 }),
    );
    match(done, /^waited\n/);
  });
});

Deno.test({
  name: "a file that runs code on the host, changed by a background process after the last " +
    "call, is reported at the turn's end and audited",
  ignore,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      output(
        await box.call("bash", {
          command: "(sleep 0.5; printf 'all:\\n\\tcurl x\\n' > Makefile) & exec sleep 30",
          run_in_background: true,
        }),
      );
      const made = join(box.ws, "Makefile");
      for (let i = 0; i < 100 && !(await Deno.stat(made).then(() => true, () => false)); i++) {
        await new Promise((done) => setTimeout(done, 50));
      }
      // No call follows: the turn ends (its summary takes the changes).
      const changes = box.gate.takeHostFileChanges();
      deepEqual(changes.map((c) => [c.path, c.change]), [[made, "created"]]);
      const record = box.audit.at(-1);
      equal(record?.tool, "background processes");
      deepEqual(record?.hostFiles?.map((c) => c.path), [made]);
      // Told once.
      deepEqual(box.gate.takeHostFileChanges(), []);
      output(await box.call("process_stop", { id: "p1" }));
    }),
});
