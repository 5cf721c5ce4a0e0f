/**
 * Adversarial shell commands against real bubblewrap: processes that try to outlive the
 * command, endless and binary output. Each test also checks (attackTest) that nothing outside
 * the writable roots changed and that no process is left.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { SHELL_MEMORY_CHARS } from "../../src/sandbox/shell_runner.ts";
import { attackTest, processesWith } from "./_bwrap_helpers.ts";

/** When a cancel comes: before the start, right after it, a little later, or once it runs. */
const CANCEL_AT = ["before", "at once", "soon", "running"] as const;

attackTest("bwrap runner kills a command that ignores SIGTERM at the timeout", async (a) => {
  const result = await a.run(`trap '' TERM; echo armed; sleep ${a.mark}`, { timeoutMs: 500 });
  ok(result.timedOut && !result.cancelled, JSON.stringify(result));
  ok(result.code !== 0);
});

attackTest("bwrap runner leaves no setsid, nohup or double-forked process behind", async (a) => {
  const result = await a.run(
    `setsid sleep ${a.mark} & nohup sleep ${a.mark} >/dev/null 2>&1 & ` +
      `( (sleep ${a.mark} &) & ); disown -a; echo started`,
  );
  deepEqual({ output: result.output, code: result.code }, { output: "started\n", code: 0 });
});

attackTest("bwrap runner kills 20 background children at the timeout", async (a) => {
  const result = await a.run(
    `for i in $(seq 20); do (echo up; exec sleep ${a.mark}) & done; wait`,
    { timeoutMs: 4000 },
  );
  ok(result.timedOut, JSON.stringify(result));
  equal(result.output.match(/^up$/gm)?.length, 20, result.output);
});

attackTest("bwrap runner stops everything when the signal aborts", async (a) => {
  const controller = new AbortController();
  let seen = 0;
  const result = await a.run(`(sleep ${a.mark}) & echo started; sleep ${a.mark}`, {
    signal: controller.signal,
    onOutput: async (text) => {
      if (!text.includes("started")) return;
      // The children are alive when the cancel comes: the cleanup check below means something.
      // Both sleeps start just after the echo (the foreground one only then): wait for them.
      for (const deadline = Date.now() + 10_000; seen < 2 && Date.now() < deadline;) {
        const found = await processesWith(`sleep ${a.mark}`);
        seen = found.filter((args) => args.startsWith("sleep ")).length;
        if (seen < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      controller.abort();
    },
  });
  ok(result.cancelled && !result.timedOut, JSON.stringify(result));
  equal(seen, 2);
});

attackTest("bwrap runner caps endless output and kills it at the timeout", async (a) => {
  // The timeout counts the sandbox's start too: with 300 ms a loaded machine's `yes` wrote less
  // than the cap (860 KB) before it came.
  const result = await a.run(`yes ${a.mark}`, { timeoutMs: 3_000 });
  ok(result.timedOut);
  // The head and the end, each half of the limit, and the marker between them.
  ok(result.output.length <= SHELL_MEMORY_CHARS + 60, String(result.output.length));
  ok(result.totalChars > result.output.length, `${result.totalChars}`);
  ok(/\[\.\.\. \d+ characters dropped \.\.\.\]/.test(result.output));
  ok(result.output.startsWith(`${a.mark}\n${a.mark}\n`));
});

attackTest("bwrap runner returns binary output as well-formed text", async (a) => {
  const result = await a.run("head -c 10000 /dev/urandom; printf '\\000\\377\\376end'");
  equal(result.code, 0);
  ok(result.output.isWellFormed());
  ok(result.output.endsWith("\0\uFFFD\uFFFDend"), JSON.stringify(result.output.slice(-10)));
  equal(JSON.parse(JSON.stringify(result.output)), result.output);
});

attackTest("bwrap runner cannot see or signal host processes", async (a) => {
  const host = new Deno.Command("sleep", { args: [a.mark], stdout: "null", stderr: "null" })
    .spawn();
  try {
    const result = await a.run(`kill -KILL ${host.pid}; ls /proc | grep -c '^[0-9]'`);
    ok(/No such process/.test(result.output), result.output);
    ok(Number(result.output.trim().split("\n").at(-1)) < 10, result.output);
    const alive = await processesWith(`sleep ${a.mark}`);
    equal(alive.length, 1, "the host process was killed");
  } finally {
    host.kill("SIGKILL");
    await host.status;
  }
});

attackTest("bwrap runner leaves nothing behind after 200 cancelled sandboxes", async (a) => {
  const cancelOne = async (i: number) => {
    const at = CANCEL_AT[i % CANCEL_AT.length];
    const controller = new AbortController();
    if (at === "before") controller.abort();
    const result = a.run(`echo started; sleep ${a.mark}; echo finished`, {
      signal: controller.signal,
      onOutput: (text) => {
        if (at === "running" && text.includes("started")) controller.abort();
      },
    });
    if (at === "at once") controller.abort();
    if (at === "soon") setTimeout(() => controller.abort(), i % 25);
    const { cancelled, timedOut, output, code } = await result;
    deepEqual(
      { cancelled, timedOut, finished: output.includes("finished") },
      { cancelled: true, timedOut: false, finished: false },
      `${at} (${i}): exit code ${code}, output ${JSON.stringify(output.slice(0, 500))}`,
    );
  };
  // Four at a time: cancels land while other sandboxes start and end.
  for (let i = 0; i < 200; i += 4) {
    await Promise.all([0, 1, 2, 3].map((k) => cancelOne(i + k)));
  }
  // Each run returned only after its sandbox's init and group were killed; attackTest then
  // gives the kernel up to 5 s to end what is left of each pid namespace. The commands sleep
  // 30 s: a sandbox that outlived its cancel is still there then (bubblewrap killed while it
  // set up left its sandbox running, the command in it, before killSandboxInit).
});
