import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Observation } from "../../src/core/observation.ts";
import {
  createBwrapRunner,
  createUnsandboxedRunner,
  shellEnv,
} from "../../src/sandbox/shell_runner.ts";
import type { ShellRunner } from "../../src/sandbox/types.ts";
import { createBashTool, MAX_BASH_OUTPUT_CHARS } from "../../src/tools/bash.ts";
import type { Tool } from "../../src/tools/define.ts";
import { bwrap } from "../sandbox/_bwrap_helpers.ts";
import { context, failed, succeeded, withSandbox } from "./_helpers.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const bash = createBashTool();

/** Every case runs through real bubblewrap; skipped (loudly, by the import) when it cannot run. */
function bwrapTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: !bwrap.ok, fn });
}

/** A bubblewrap runner for workspace `ws`: it and a private tmp beside it are writable. */
async function sandboxShell(ws: string): Promise<ShellRunner> {
  const tmp = join(ws, "..", "tmp");
  await Deno.mkdir(tmp, { recursive: true });
  return createBwrapRunner({
    cwd: ws,
    writable: [ws],
    readOnly: [],
    hidden: [],
    network: false,
    env: shellEnv(),
  });
}

/** Runs `tool` in workspace `ws` with a bubblewrap shell. */
async function call(tool: Tool, ws: string, args: unknown): Promise<Observation> {
  return await tool.run(args, context(ws, { shell: await sandboxShell(ws) }));
}

/** A number unlikely to be in any other process's command line: `sleep <marker>` finds ours. */
function marker(): string {
  return `30.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

interface ProcInfo {
  pid: number;
  state: string;
  pgid: number;
  cmdline: string;
}

/** Live (non-zombie) processes, from `ps` (Deno refuses to read /proc without --allow-all). */
async function liveProcesses(): Promise<ProcInfo[]> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pid=,pgid=,stat=,args="] }).output();
  ok(ps.success);
  const found: ProcInfo[] = [];
  for (const line of new TextDecoder().decode(ps.stdout).split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s*(.*)$/.exec(line);
    if (match === null || match[3].startsWith("Z")) continue;
    found.push({
      pid: Number(match[1]),
      pgid: Number(match[2]),
      state: match[3],
      cmdline: match[4],
    });
  }
  return found;
}

async function withMarker(text: string): Promise<ProcInfo[]> {
  return (await liveProcesses()).filter((p) => p.cmdline.includes(text));
}

testWith(
  [bwrapNeed],
  "liveProcesses() sees a running sleep by its marker (the leak checks can fail)",
  async () => {
    const mark = marker();
    const child = new Deno.Command("sleep", { args: [mark], stdout: "null", stderr: "null" })
      .spawn();
    try {
      equal((await withMarker(mark)).length, 1);
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
  },
);

bwrapTest("bash() returns stdout and stderr in order, then the exit code", async () => {
  await withSandbox(async ({ ws }) => {
    const obs = await call(bash, ws, { command: "echo a; echo b >&2; echo c" });
    equal(succeeded(obs), "a\nb\nc\nexit code: 0");
    ok(obs.status === "SUCCEEDED");
    deepEqual(obs.details, { kind: "command", exitCode: 0, timedOut: false, truncated: false });
  });
});

bwrapTest("bash() treats a non-zero exit as a result the model reads", async () => {
  await withSandbox(async ({ ws }) => {
    equal(succeeded(await call(bash, ws, { command: "exit 3" })), "(no output)\nexit code: 3");
    // Inside bubblewrap only its exit is seen: a signal shows as 128 + n.
    equal(
      succeeded(await call(bash, ws, { command: "kill -KILL $$" })),
      "(no output)\nexit code: 137",
    );
  });
});

Deno.test("bash() runs through the unsandboxed runner and names the killing signal", async () => {
  await withSandbox(async ({ ws }) => {
    const shell = createUnsandboxedRunner(shellEnv());
    const run = (command: string) => bash.run({ command }, context(ws, { shell }));
    equal(succeeded(await run("echo a; echo b >&2; pwd")), `a\nb\n${ws}\nexit code: 0`);
    equal(succeeded(await run("kill -KILL $$")), "(no output)\nexit code: 137 (killed by SIGKILL)");
  });
});

Deno.test("bash() fails without a shell sandbox and runs nothing", async () => {
  await withSandbox(async ({ ws }) => {
    const obs = await bash.run({ command: "touch ran" }, context(ws));
    equal(failed(obs, "EXECUTION_FAILED"), 'Cannot run "bash": no shell sandbox was provided');
    ok(!(await Deno.stat(join(ws, "ran")).then(() => true, () => false)));
  });
});

Deno.test("bash() reports a shell that cannot start as EXECUTION_FAILED", async () => {
  await withSandbox(async ({ ws }) => {
    const shell = createBwrapRunner({
      cwd: ws,
      writable: [ws],
      readOnly: [],
      hidden: [],
      network: false,
      env: {},
    }, { bwrapPath: join(ws, "no-bwrap") });
    const message = failed(
      await bash.run({ command: "true" }, context(ws, { shell })),
      "EXECUTION_FAILED",
    );
    ok(message.startsWith('Cannot run "bash": '), message);
  });
});

bwrapTest("bash() runs in the workspace with stdin closed", async () => {
  await withSandbox(async ({ ws }) => {
    equal(succeeded(await call(bash, ws, { command: "pwd" })), `${ws}\nexit code: 0`);
    equal(succeeded(await call(bash, ws, { command: "cat; echo done" })), "done\nexit code: 0");
  });
});

bwrapTest("bash() never passes secrets in the environment", async () => {
  const secrets = {
    TERN_API_KEY: "sk-tern",
    OPENAI_API_KEY: "sk-openai",
    ANTHROPIC_API_KEY: "sk-anthropic",
    GITHUB_TOKEN: "ghp-token",
    DB_PASSWORD: "hunter2-4b8d",
    // Values no path or variable of the machine contains by chance ("shh" is in "/tmp/freshhome").
    MY_SECRET: "shh-7c1e9a",
  };
  const before = new Map(Object.keys(secrets).map((k) => [k, Deno.env.get(k)]));
  for (const [name, value] of Object.entries(secrets)) Deno.env.set(name, value);
  Deno.env.set("LC_TERN_TEST", "kept");
  try {
    await withSandbox(async ({ ws }) => {
      const out = succeeded(await call(bash, ws, { command: "env" }));
      for (const [name, value] of Object.entries(secrets)) {
        ok(!out.includes(name) && !out.includes(value), `${name} leaked:\n${out}`);
      }
      ok(/^PATH=/m.test(out), out);
      ok(/^LC_TERN_TEST=kept$/m.test(out), out);
    });
  } finally {
    for (const [name, value] of before) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
    Deno.env.delete("LC_TERN_TEST");
  }
});

bwrapTest(
  "bash() times out, kills the whole group (SIGTERM ignored, grandchild) and keeps partial output",
  async () => {
    await withSandbox(async ({ ws }) => {
      const mark = marker();
      const command = `echo started; trap '' TERM; (trap '' TERM; sleep ${mark}) & sleep ${mark}`;
      const message = failed(await call(bash, ws, { command, timeout_ms: 1000 }), "TIMEOUT");
      ok(message.startsWith("Command timed out after 1000 ms"), message);
      ok(message.includes("started"), message);
      deepEqual(await withMarker(mark), []);
    });
  },
);

bwrapTest("bash() stops the group when the signal aborts and keeps partial output", async () => {
  await withSandbox(async ({ ws }) => {
    const mark = marker();
    const controller = new AbortController();
    const obs = await bash.run({ command: `echo started; (sleep ${mark}) & sleep ${mark}` }, {
      workspace: ws,
      signal: controller.signal,
      shell: await sandboxShell(ws),
      update: (text) => {
        if (text.includes("started")) controller.abort();
      },
    });
    const message = failed(obs, "CANCELLED");
    ok(message.includes("started"), message);
    deepEqual(await withMarker(mark), []);
  });
});

bwrapTest("bash() ends background jobs when the command finishes", async () => {
  await withSandbox(async ({ ws }) => {
    const mark = marker();
    const out = succeeded(await call(bash, ws, { command: `sleep ${mark} & echo started` }));
    equal(out, "started\nexit code: 0");
    deepEqual(await withMarker(mark), []);
  });
});

bwrapTest("bash() streams output through ctx.update", async () => {
  await withSandbox(async ({ ws }) => {
    const pieces: string[] = [];
    const obs = await bash.run({ command: "echo one; echo two" }, {
      workspace: ws,
      signal: new AbortController().signal,
      shell: await sandboxShell(ws),
      update: (text) => pieces.push(text),
    });
    succeeded(obs);
    equal(pieces.join(""), "one\ntwo\n");
  });
});

bwrapTest("bash() keeps the head and tail of long output and says what was cut", async () => {
  await withSandbox(async ({ ws }) => {
    const obs = await call(bash, ws, { command: "seq 1 100000" });
    const out = succeeded(obs);
    ok(out.startsWith("1\n2\n3\n"), out.slice(0, 20));
    ok(out.endsWith("99999\n100000\nexit code: 0"), out.slice(-40));
    ok(/\[\.\.\. \d+ characters \(\d+ lines\) cut \.\.\.\]/.test(out));
    ok(out.length < MAX_BASH_OUTPUT_CHARS + 1_000, String(out.length));
    ok(obs.status === "SUCCEEDED" && obs.details?.kind === "command" && obs.details.truncated);
  });
});

bwrapTest("createBashTool() uses the configured default timeout", async () => {
  await withSandbox(async ({ ws }) => {
    const quick = createBashTool({ defaultTimeoutMs: 300 });
    ok(quick.description.includes("Timeout 0.3 s by default"), quick.description);
    const message = failed(await call(quick, ws, { command: `sleep ${marker()}` }), "TIMEOUT");
    ok(message.startsWith("Command timed out after 300 ms"), message);
  });
});

bwrapTest("bash() rejects bad arguments without running anything", async () => {
  await withSandbox(async ({ ws }) => {
    for (
      const args of [
        {},
        { command: 5 },
        { command: "touch ran", extra: true },
        { command: "touch ran", timeout_ms: 600_001 },
        { command: "touch ran", timeout_ms: "10" },
      ]
    ) {
      failed(await call(bash, ws, args), "INVALID_ARGUMENTS");
    }
    ok(!(await Deno.stat(join(ws, "ran")).then(() => true, () => false)));
  });
});
