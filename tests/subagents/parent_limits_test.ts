/**
 * A subagent holds no more than its parent: the parent's autoNetwork decides who may widen its
 * sandbox, a model-chosen provider never takes a key to a host it was not given for, its
 * commands share the parent's run cgroups, a project cannot raise the subagent limits, and its
 * turn ends at its time limit even when its parent is gone.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { REVIEWER_SYSTEM } from "../../src/agent/auto_reviewer.ts";
import { loadConfig } from "../../src/config/mod.ts";
import {
  CHILD_PROTOCOL_VERSION,
  type ChildLine,
  type ChildRequest,
} from "../../src/harness/subagents/protocol.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { runCgroupPrefix } from "../../src/sandbox/run_cgroup.ts";
import { loadSession } from "../../src/session/load.ts";
import { listSessions } from "../../src/session/paths.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed } from "../support/needs.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, firstUser, records, startChild } from "./_helpers.ts";

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
const isReviewer = (request: ModelRequest) =>
  String(request.messages[0]?.content ?? "").startsWith(REVIEWER_SYSTEM.slice(0, 40));

/** The parent spawns `spawn`, waits for it, then ends. */
function parentReply(request: ModelRequest, spawn: Record<string, unknown>): ScriptedReply {
  const text = allText(request);
  if (!text.includes("Started subagent") && !text.includes("Cannot")) {
    return call("spawn_agent", spawn, "s1");
  }
  return text.includes("[subagent ") || text.includes("Cannot")
    ? { text: "parent done" }
    : call("wait_agent", {}, "w1");
}

/** The completion the parent session of `home` recorded (the only one). */
async function completionOf(home: string): Promise<Record<string, unknown>> {
  const parent = (await listSessions(home)).find((s) => s.subagentOf === undefined)!;
  const [completion] = records((await loadSession(parent.path)).entries, "completion");
  return completion;
}

for (const how of ["--auto-network never", 'config {"autoNetwork":"person"}']) {
  Deno.test(`a child of an AUTO parent widens its sandbox only as the parent may (${how})`, async () => {
    const outside = await Deno.makeTempDir({ prefix: "tern-outside-" });
    // The reviewer allows everything: only the parent's autoNetwork can refuse the grant.
    const script = (request: ModelRequest): ScriptedReply => {
      if (isReviewer(request)) return { text: '{"decision":"allow","reason":"fine"}' };
      if (isChild(request)) {
        const result = request.messages.find((m) => m.role === "tool");
        if (result === undefined) {
          return call("request_permissions", { reason: "need it", read: [outside] }, "r1");
        }
        return { text: `told: ${result.content.replace(/\n/g, " ")}` };
      }
      return parentReply(request, {
        task_name: "reader",
        message: "CHILD read outside",
        tools: ["request_permissions"],
      });
    };
    const server = await startScriptedServer(script, { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    try {
      const flags = how.startsWith("--") ? ["--auto-network", "never"] : [];
      if (flags.length === 0) {
        await Deno.writeTextFile(join(ws.home, "config.jsonc"), '{"autoNetwork":"person"}');
      }
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
      const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "auto"];
      const run = await runTern([...args, ...flags, "go"], { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const content = String((await completionOf(ws.home)).content);
      match(content, /told: .*denied/i);
      ok(!content.includes("Granted"), content);
    } finally {
      await server.close();
      await ws.cleanup();
      await Deno.remove(outside, { recursive: true });
    }
  });
}

Deno.test("spawn_agent() refuses another provider under the person's base URL: its key stays", async () => {
  const script = (request: ModelRequest): ScriptedReply =>
    isChild(request) ? { text: "child ok" } : parentReply(request, {
      task_name: "other",
      message: "CHILD go",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = {
      TERN_HOME: ws.home,
      HOME: ws.home,
      OPENAI_API_KEY: "k",
      ANTHROPIC_API_KEY: "sk-ant-secret",
    };
    const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"];
    const run = await runTern(args, { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    // Nothing reached the person's base URL with the other provider's key, nor its API.
    deepEqual(server.requests.filter((r) => r.path !== "/v1/chat/completions"), []);
    ok(!JSON.stringify(server.requests.map((r) => r.headers)).includes("sk-ant-secret"));
    match(
      allText(server.requests.at(-1)!.modelRequest),
      /Cannot give subagent "other" provider "anthropic": the base URL .* was given for/,
    );
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("spawn_agent() refuses another provider while TERN_API_KEY holds the parent's key", async () => {
  const script = (request: ModelRequest): ScriptedReply =>
    isChild(request) ? { text: "child ok" } : parentReply(request, {
      task_name: "other",
      message: "CHILD go",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    // Both providers at the scripted server (the person's own config): only the key differs.
    const config = {
      provider: "mine",
      providers: {
        mine: { api: "openai", baseUrl: server.baseUrl },
        anthropic: { baseUrl: server.baseUrl },
      },
    };
    await Deno.writeTextFile(join(ws.home, "config.jsonc"), JSON.stringify(config));
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "main-secret" };
    const args = ["run", "-m", "scripted", "--mode", "bypass", "go"];
    const run = await runTern(args, { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    deepEqual(server.requests.filter((r) => r.path !== "/v1/chat/completions"), []);
    match(
      allText(server.requests.at(-1)!.modelRequest),
      /Cannot use provider "anthropic" for a subagent: TERN_API_KEY holds the key/,
    );
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("loadConfig() lets a project lower the subagent limits, never raise them", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home };
    await Deno.mkdir(join(ws.dir, ".tern"));
    const file = join(ws.dir, ".tern", "config.jsonc");
    await Deno.writeTextFile(
      file,
      '{"maxSubagents":2,"subagentTimeoutMs":1000,"subagentEscalationTimeoutMs":500}',
    );
    const { config } = await loadConfig({ cwd: ws.dir, env });
    deepEqual(
      [config.maxSubagents, config.subagentTimeoutMs, config.subagentEscalationTimeoutMs],
      [2, 1000, 500],
    );
    await Deno.writeTextFile(file, '{"maxSubagents":16}');
    await rejects(
      loadConfig({ cwd: ws.dir, env }),
      /Refusing "maxSubagents" in .*: 16 subagents at once is more than the default 4/,
    );
    await Deno.writeTextFile(file, '{"subagentTimeoutMs":99999999}');
    await rejects(loadConfig({ cwd: ws.dir, env }), /Refusing "subagentTimeoutMs"/);
    await Deno.writeTextFile(file, '{"subagentEscalationTimeoutMs":86400000}');
    await rejects(
      loadConfig({ cwd: ws.dir, env }),
      /Refusing "subagentEscalationTimeoutMs" .*longer than the default 300000 ms/,
    );
    // The person's own config may raise them.
    await Deno.remove(file);
    await Deno.writeTextFile(join(ws.home, "config.jsonc"), '{"maxSubagents":8}');
    equal((await loadConfig({ cwd: ws.dir, env })).config.maxSubagents, 8);
  } finally {
    await ws.cleanup();
  }
});

/** Where this machine's pids cgroups are made (v1's own tree, or v2's root), if tern can. */
function pidsTree(): string | undefined {
  if (Deno.uid() !== 0) return undefined;
  for (const tree of ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"]) {
    try {
      if (Deno.statSync(join(tree, "cgroup.procs")).isFile) return tree;
    } catch {
      // Not this one.
    }
  }
  return undefined;
}

Deno.test({
  name: "a child's commands join the parent's run cgroups instead of making their own",
  ignore: !bwrapNeed.ok || pidsTree() === undefined,
  fn: async () => {
    const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-cg-" }));
    const prefix = runCgroupPrefix(tmp);
    const counts: number[] = [];
    const script = (request: ModelRequest): ScriptedReply => {
      if (isChild(request)) {
        if (!request.messages.some((m) => m.role === "tool")) {
          return call("bash", { command: "echo child ran" }, "b1");
        }
        // The child's sandbox is open and ran a command: the run's cgroups are all there.
        counts.push(
          [...Deno.readDirSync(pidsTree()!)].filter((e) => e.name.startsWith(prefix)).length,
        );
        return { text: "child ok" };
      }
      if (!request.messages.some((m) => m.role === "tool")) {
        return call("bash", { command: "echo parent ran" }, "b0");
      }
      return parentReply(request, { task_name: "cg", message: "CHILD go", tools: ["bash"] });
    };
    const server = await startScriptedServer(script, { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    try {
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k", TMPDIR: tmp };
      const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
      const run = await runTern([...args, "go"], { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const completion = await completionOf(ws.home);
      equal(completion.status, "completed", String(completion.error));
      deepEqual(counts, [1]);
    } finally {
      await server.close();
      await ws.cleanup();
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
});

function request(cwd: string, baseUrl: string, timeoutMs: number): ChildRequest {
  return {
    type: "request",
    version: CHILD_PROTOCOL_VERSION,
    taskName: "sleeper",
    agentId: "agent-1",
    childSessionId: crypto.randomUUID(),
    runId: "run-1",
    parentSession: { id: crypto.randomUUID(), path: "/nowhere/parent.jsonl" },
    prompt: "sleep",
    goal: "sleep a while",
    cwd,
    tools: { allow: ["bash"] },
    permissions: {
      profile: ":workspace",
      noSandbox: true,
      parentMode: "bypass",
      autoNetwork: "never",
      autoAskRules: "reviewer",
      changes: [],
      escalationTimeoutMs: 1000,
    },
    timeoutMs,
    model: { model: "scripted", thinking: "off", baseUrl },
  };
}

/** The child runs a long `sleep` (its marker `seconds` apart from any other). */
function sleeper(seconds: string) {
  return (request: ModelRequest): ScriptedReply =>
    request.messages.some((m) => m.role === "tool")
      ? { text: "slept" }
      : call("bash", { command: `sleep ${seconds}`, timeout_ms: 600_000 }, "b1");
}

/** Whether a process runs `sleep <seconds>`. */
async function sleeping(seconds: string): Promise<boolean> {
  const out = await new Deno.Command("pgrep", { args: ["-f", `^sleep ${seconds}$`] }).output();
  return out.success;
}

Deno.test("tern child ends its turn at the request's time limit, its parent gone or not", async () => {
  for (const parentGone of [false, true]) {
    // Digits of its own: another run's sleep (a test run beside this one) is not taken for it.
    const seconds = `${parentGone ? 348 : 347}.${String(Math.random()).slice(2, 8)}`;
    const server = await startScriptedServer(sleeper(seconds), { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    try {
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
      const started = Date.now();
      // The limit counts the child's opening too: 3 s ended a loaded machine's run before its
      // command started.
      const child = startChild(request(ws.dir, server.baseUrl, 10_000), {
        cwd: ws.dir,
        env,
        baseUrl: server.baseUrl,
      });
      let final: Extract<ChildLine, { type: "final" }> | undefined;
      let slept = false;
      for await (const line of child.lines) {
        if (line.type === "event" && line.event.type === "tool_start") {
          slept = true;
          // As when the parent is killed: the pipe's writing end goes away, and its timer too.
          if (parentGone) await child.closeStdin();
        }
        if (line.type === "final") final = line;
      }
      equal((await child.status).code, 0, await child.stderr);
      ok(slept, "its command started");
      equal(final?.status, "timed_out", final?.error);
      ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
      ok(!(await sleeping(seconds)), "its command was stopped");
    } finally {
      await server.close();
      await ws.cleanup();
    }
  }
});

Deno.test("loadConfig(): a project's subagent limit never raises what the person set lower", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home };
    await Deno.writeTextFile(join(ws.home, "config.jsonc"), '{"maxSubagents":1}');
    await Deno.mkdir(join(ws.dir, ".tern"));
    // Within the default (4), yet above the person's 1: the person's stays.
    await Deno.writeTextFile(join(ws.dir, ".tern", "config.jsonc"), '{"maxSubagents":4}');
    equal((await loadConfig({ cwd: ws.dir, env })).config.maxSubagents, 1);
    // Nor through the project's .env.
    await Deno.remove(join(ws.dir, ".tern", "config.jsonc"));
    await Deno.writeTextFile(join(ws.dir, ".env"), "TERN_MAX_SUBAGENTS=3\n");
    equal((await loadConfig({ cwd: ws.dir, env })).config.maxSubagents, 1);
    // A lower one still applies.
    await Deno.writeTextFile(join(ws.home, "config.jsonc"), '{"maxSubagents":3}');
    await Deno.writeTextFile(join(ws.dir, ".env"), "TERN_MAX_SUBAGENTS=2\n");
    equal((await loadConfig({ cwd: ws.dir, env })).config.maxSubagents, 2);
  } finally {
    await ws.cleanup();
  }
});
