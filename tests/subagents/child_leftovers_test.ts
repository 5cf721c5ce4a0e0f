/**
 * What a child leaves behind in its process group ends with it: when it ends by itself, when
 * the parent stops it, and when the parent is killed by SIGKILL (the child then runs on to
 * record its outcome, and its leftovers go when it ends). The child is a `bin/tern` beside a
 * driver that runs the parent's real `ChildProcess`, so the launcher the parent finds is it.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REVIEWER_SYSTEM } from "../../src/agent/auto_reviewer.ts";
import type { ChildRequest } from "../../src/harness/subagents/protocol.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, childRequest, firstUser, ternChildPids, until } from "./_helpers.ts";

const REQUEST: ChildRequest = childRequest();

/** Runs the parent's ChildProcess; stops the child after `stopMs` (when not empty). */
const DRIVER = `
import { ChildProcess } from ${
  JSON.stringify(pathToFileURL(join(ROOT, "src/harness/subagents/child_process.ts")).href)
};
const [request, stopMs] = Deno.args;
const child = new ChildProcess({
  request: JSON.parse(request),
  timeoutMs: 60_000,
  escalate: () => Promise.resolve("deny"),
  onEnd: (outcome) => {
    console.log(JSON.stringify({ outcome }));
    Deno.exit(0);
  },
});
if (stopMs !== "") setTimeout(() => child.stop(), Number(stopMs));
`;

const FINAL = `printf '{"type":"final","version":1,"taskName":"scan","agentId":"agent-1",` +
  `"childSessionId":"${REQUEST.childSessionId}","runId":"run-1","status":"completed",` +
  `"content":"done","finalEntryId":null}\\n'`;

/** The child's script, given its folder: it leaves processes whose pids it writes to left.pid. */
type Script = (dir: string) => string;

/** Leaves a plain background job and a job of a subshell that ignores SIGTERM and SIGHUP. */
const LEAVE = (dir: string) =>
  `sleep 307 & echo $! >> ${dir}/left.pid
( trap '' TERM HUP; exec sleep 308 ) & echo $! >> ${dir}/left.pid
echo $$ > ${dir}/child.pid`;

async function setUp(script: Script): Promise<{ dir: string; driver: Deno.ChildProcess }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-child-left-" }));
  await Deno.mkdir(join(dir, "bin"));
  await Deno.writeTextFile(
    join(dir, "bin", "tern"),
    `#!/bin/bash\nread -r request\n${script(dir)}\n`,
    { mode: 0o755 },
  );
  await Deno.writeTextFile(join(dir, "driver.js"), DRIVER);
  return { dir, driver: driverProcess(dir, "") };
}

function driverProcess(dir: string, stopMs: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-check",
      "--no-prompt",
      "--config",
      join(ROOT, "deno.json"),
      "--allow-all",
      join(dir, "driver.js"),
      JSON.stringify(REQUEST),
      stopMs,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function pidsIn(file: string): Promise<number[]> {
  try {
    return (await Deno.readTextFile(file)).trim().split("\n").filter((line) => line !== "")
      .map(Number);
  } catch {
    return [];
  }
}

/** Whether process `pid` runs (and is no zombie), from `ps`. */
function running(pid: number): boolean {
  const out = new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).outputSync();
  const state = new TextDecoder().decode(out.stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

async function cleanUp(dir: string): Promise<void> {
  for (
    const pid of [...await pidsIn(join(dir, "left.pid")), ...await pidsIn(join(dir, "child.pid"))]
  ) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  await Deno.remove(dir, { recursive: true });
}

/** Waits up to `ms` for every process of `file` to be gone; returns those still there. */
async function leftAfter(file: string, ms: number): Promise<number[]> {
  const pids = await pidsIn(file);
  const deadline = Date.now() + ms;
  while (pids.some(running) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return pids.filter(running);
}

Deno.test("ChildProcess ends what a child left in its group when the child ends", async () => {
  const { dir, driver } = await setUp((dir) => `${LEAVE(dir)}\n${FINAL}\nexit 0`);
  try {
    const output = await driver.output();
    const text = new TextDecoder().decode(output.stdout).trim();
    ok(text !== "", new TextDecoder().decode(output.stderr));
    equal(JSON.parse(text).outcome.kind, "final");
    equal((await pidsIn(join(dir, "left.pid"))).length, 2);
    // The parent kills the group as it sees the child exit: no second is waited for.
    equal((await leftAfter(join(dir, "left.pid"), 500)).length, 0, "a leftover still runs");
  } finally {
    await cleanUp(dir);
  }
});

Deno.test("ChildProcess.stop() ends the child and what it left in its group", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-child-left-" }));
  await Deno.mkdir(join(dir, "bin"));
  // The child ends its turn at SIGTERM (its leftovers ignore it).
  await Deno.writeTextFile(
    join(dir, "bin", "tern"),
    `#!/bin/bash\nread -r request\n${LEAVE(dir)}\ntrap 'exit 7' TERM\nsleep 60 & wait\n`,
    { mode: 0o755 },
  );
  await Deno.writeTextFile(join(dir, "driver.js"), DRIVER);
  try {
    const output = await driverProcess(dir, "1500").output();
    const text = new TextDecoder().decode(output.stdout).trim();
    ok(text !== "", new TextDecoder().decode(output.stderr));
    const { outcome } = JSON.parse(text);
    equal(outcome.kind, "lost");
    ok(outcome.error.includes("(code 7)"), outcome.error);
    equal((await pidsIn(join(dir, "left.pid"))).length, 2);
    equal((await leftAfter(join(dir, "left.pid"), 500)).length, 0, "a leftover still runs");
  } finally {
    await cleanUp(dir);
  }
});

Deno.test("a child whose parent was killed by SIGKILL runs on, and its leftovers end with it", async () => {
  const { dir, driver } = await setUp((dir) =>
    `${LEAVE(dir)}\nwhile [ ! -e ${dir}/go ]; do sleep 0.05; done\n${FINAL} 2>/dev/null\nexit 0`
  );
  try {
    await until(async () => (await pidsIn(join(dir, "child.pid"))).length === 1, "the child");
    driver.kill("SIGKILL");
    await driver.output();
    const [child] = await pidsIn(join(dir, "child.pid"));
    // The parent is gone: the child runs on, and so does what it left.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    ok(running(child), "the child ended with its parent");
    equal((await pidsIn(join(dir, "left.pid"))).filter(running).length, 2);
    await Deno.writeTextFile(join(dir, "go"), "");
    // The group's watchdog checks every second.
    equal((await leftAfter(join(dir, "child.pid"), 10_000)).length, 0, "the child still runs");
    equal((await leftAfter(join(dir, "left.pid"), 5_000)).length, 0, "a leftover still runs");
  } finally {
    await cleanUp(dir);
  }
});

/** The lines of `ps` (pid and command line) that hold `text`. */
function processesWith(text: string): string[] {
  const out = new Deno.Command("ps", { args: ["-e", "-ww", "-o", "pid=,args="] }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter((line) =>
    line.includes(text) && !line.includes("ps -e")
  );
}

Deno.test("tern run stopped while its child runs a command leaves nothing of the child's", async () => {
  // The child's command leaves a background job and runs on; the parent gets SIGTERM meanwhile.
  const command = "sleep 309.1 & echo started; sleep 309.2";
  const script = (request: ModelRequest): ScriptedReply => {
    if (request.messages[0]?.content === REVIEWER_SYSTEM) {
      return { text: '{"decision":"allow","reason":"fine"}' };
    }
    if (firstUser(request).startsWith("CHILD")) {
      return call("bash", { command, timeout_ms: 120_000 }, "b1");
    }
    if (!allText(request).includes("Started subagent")) {
      return call("spawn_agent", { task_name: "job", message: "CHILD go", tools: ["bash"] }, "s1");
    }
    return call("wait_agent", { timeout_ms: 120_000 }, "w1");
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
    const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"];
    const parent = new Deno.Command(Deno.execPath(), {
      args: ["run", ...declaredFlags(env, { cwd: ws.dir, args }), join(ROOT, "main.ts"), ...args],
      cwd: ws.dir,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    await until(() => processesWith("sleep 309.2").length > 0, "the child's command");
    const children = ternChildPids(server.baseUrl);
    ok(children.length > 0);
    // Each child (the running one and the idle one) has its group's watchdog.
    for (const child of children) {
      equal(processesWith(`tern-child-watchdog ${child} `).length, 1, `no watchdog of ${child}`);
    }
    parent.kill("SIGTERM");
    await parent.output();
    await until(
      () =>
        ternChildPids(server.baseUrl).length === 0 && processesWith("sleep 309.").length === 0 &&
        children.every((child) => processesWith(`tern-child-watchdog ${child} `).length === 0),
      "the children, their commands and their watchdogs to end",
    );
  } finally {
    for (const line of processesWith("sleep 309.")) {
      try {
        Deno.kill(Number(line.trim().split(/\s+/)[0]), "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await server.close();
    await ws.cleanup();
  }
});
