/**
 * PreToolUse and PostToolUse hooks fire for the tools that run outside the permission gate
 * (spawn_agent, wait_agent, request_permissions) as for gated ones: a block refuses, a rewritten
 * input is validated again by the tool, a "*" hook sees every call. The real `tern run`, real
 * hook scripts in the real sandbox, the scripted model server.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { auditDir } from "../../src/sandbox/audit.ts";
import { toolHookGate } from "../../src/harness/session_hooks.ts";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import type { ToolContext } from "../../src/tools/define.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapTest } from "../sandbox/_bwrap_helpers.ts";

type Call = { name: string; args: Record<string, unknown> };

/**
 * Runs `tern run` with `hooks` in the person's settings: the model makes `calls` one per
 * round, then answers "done"; a child answers "child done". Returns the tool results the
 * parent's model saw, whether a child was started, and the audit records.
 */
async function runWithHooks(
  hooks: Record<string, unknown>,
  calls: Call[],
  check: (seen: {
    results: string[];
    childStarted: boolean;
    audit: Record<string, unknown>[];
    ws: string;
  }) => Promise<void>,
): Promise<void> {
  const ws = await tempWorkspace();
  await Deno.writeTextFile(join(ws.home, "settings.json"), JSON.stringify({ hooks }));
  let childStarted = false;
  let results: string[] = [];
  const script = (request: ModelRequest): ScriptedReply => {
    const text = JSON.stringify(request.messages);
    if (text.includes("CHILD-TASK") && !text.includes("spawn_agent")) {
      childStarted = true;
      return { text: "child done" };
    }
    const tools = request.messages.filter((m) => m.role === "tool");
    results = tools.map((m) => JSON.stringify(m));
    const next = calls[tools.length];
    if (next === undefined) return { text: "done" };
    return {
      toolCalls: [{
        id: `c${tools.length}`,
        name: next.name,
        arguments: JSON.stringify(next.args),
      }],
    };
  };
  const server = await startScriptedServer(script as unknown as ScriptedReply[], {
    chunkDelayMs: 0,
  });
  try {
    const run = await runTern(
      [
        "run",
        "--base-url",
        server.baseUrl,
        "-m",
        "scripted",
        "--mode",
        "bypass",
        "-o",
        "json",
        "go",
      ],
      { cwd: ws.dir, env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-test-hooks" } },
    );
    equal(run.code, 0, run.stderr);
    const audit: Record<string, unknown>[] = [];
    for await (const entry of Deno.readDir(auditDir(ws.home))) {
      const text = await Deno.readTextFile(join(auditDir(ws.home), entry.name));
      audit.push(...text.split("\n").filter((line) => line !== "").map((l) => JSON.parse(l)));
    }
    await check({ results, childStarted, audit, ws: ws.dir });
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

const command = (text: string) => ({ type: "command", command: text });

bwrapTest("spawn_agent: a PreToolUse hook matching it blocks the spawn", async () => {
  const guard = `cat >/dev/null; echo 'no children today' >&2; exit 2`;
  await runWithHooks(
    { PreToolUse: [{ matcher: "spawn_agent", hooks: [command(guard)] }] },
    [{ name: "spawn_agent", args: { task_name: "job", message: "CHILD-TASK: say done" } }],
    async ({ results, childStarted, audit }) => {
      equal(results.length, 1);
      match(results[0], /POLICY_DENIED/);
      match(results[0], /PreToolUse hook blocked this: no children today/);
      ok(!childStarted, "a child was started");
      const record = audit.find((r) => r.tool === "spawn_agent");
      equal(record?.decidedBy, "hook", JSON.stringify(audit));
      equal(record?.decision, "deny");
      await Promise.resolve();
    },
  );
});

bwrapTest("a '*' PreToolUse hook sees request_permissions and wait_agent calls", async () => {
  await runWithHooks(
    {
      PreToolUse: [{
        matcher: "*",
        hooks: [
          command(`cat >> "$CLAUDE_PROJECT_DIR/pre.log"; echo >> "$CLAUDE_PROJECT_DIR/pre.log"`),
        ],
      }],
      PostToolUse: [{
        matcher: "wait_agent",
        hooks: [command(
          `cat >/dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", ` +
            `"additionalContext": "POST-CONTEXT-SEEN"}}'`,
        )],
      }],
    },
    [
      { name: "request_permissions", args: { reason: "need it", hosts: ["example.com"] } },
      { name: "wait_agent", args: { timeout_ms: 1000 } },
    ],
    async ({ results, ws }) => {
      const log = (await Deno.readTextFile(join(ws, "pre.log"))).split("\n")
        .filter((line) => line.trim() !== "").map((line) => JSON.parse(line));
      const names = log.map((input) => input.tern_tool_name);
      ok(names.includes("request_permissions"), JSON.stringify(names));
      ok(names.includes("wait_agent"), JSON.stringify(names));
      const asked = log.find((input) => input.tern_tool_name === "request_permissions");
      equal(asked.hook_event_name, "PreToolUse");
      equal(asked.tool_input.reason, "need it");
      equal(results.length, 2);
      match(results[1], /POST-CONTEXT-SEEN/);
    },
  );
});

bwrapTest("spawn_agent: a hook's updatedInput naming an unknown tool is refused", async () => {
  const rewrite = `cat >/dev/null; echo '{"hookSpecificOutput": {"hookEventName": ` +
    `"PreToolUse", "updatedInput": {"task_name": "job", "message": "CHILD-TASK: go", ` +
    `"tools": ["no_such_tool"]}}}'`;
  await runWithHooks(
    { PreToolUse: [{ matcher: "spawn_agent", hooks: [command(rewrite)] }] },
    [{ name: "spawn_agent", args: { task_name: "job", message: "CHILD-TASK: say done" } }],
    async ({ results, childStarted }) => {
      equal(results.length, 1);
      match(results[0], /"ERROR"|ERROR\[/);
      match(results[0], /no_such_tool/);
      ok(!childStarted, "a child was started");
      await Promise.resolve();
    },
  );
});

bwrapTest(
  "request_permissions: a PreToolUse hook that asks is denied with nobody to ask",
  async () => {
    const ask = `cat >/dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", ` +
      `"permissionDecision": "ask", "permissionDecisionReason": "check with me"}}'`;
    await runWithHooks(
      {
        PreToolUse: [{ matcher: "request_permissions", hooks: [command(ask)] }],
      },
      [{ name: "request_permissions", args: { reason: "need it", hosts: ["example.com"] } }],
      async ({ results, audit }) => {
        equal(results.length, 1);
        match(results[0], /POLICY_DENIED/);
        match(results[0], /PreToolUse hook asked for a person's decision/);
        const record = audit.find((r) => r.tool === "request_permissions");
        equal(record?.decidedBy, "hook", JSON.stringify(audit));
        await Promise.resolve();
      },
    );
  },
);

bwrapTest("spawn_agent: a PreToolUse hook that asks is denied under BYPASS", async () => {
  const ask = `cat >/dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", ` +
    `"permissionDecision": "ask", "permissionDecisionReason": "check with me"}}'`;
  await runWithHooks(
    { PreToolUse: [{ matcher: "spawn_agent|wait_agent", hooks: [command(ask)] }] },
    [{ name: "spawn_agent", args: { task_name: "job", message: "CHILD-TASK: say done" } }],
    async ({ results, childStarted, audit }) => {
      equal(results.length, 1);
      match(results[0], /POLICY_DENIED/);
      match(results[0], /a PreToolUse hook asks a person/);
      ok(!childStarted, "a child was started");
      const record = audit.find((r) => r.tool === "spawn_agent");
      equal(record?.decidedBy, "hook", JSON.stringify(audit));
      await Promise.resolve();
    },
  );
});

bwrapTest(
  "wait_agent: a PreToolUse hook's continue: false refuses the call and ends the turn",
  async () => {
    const stop = `cat >/dev/null; echo '{"continue": false, "stopReason": "enough for today"}'`;
    await runWithHooks(
      { PreToolUse: [{ matcher: "wait_agent", hooks: [command(stop)] }] },
      [{ name: "wait_agent", args: { timeout_ms: 1000 } }, { name: "wait_agent", args: {} }],
      async ({ results }) => {
        // The model is not asked again after the stopped call: it never saw its result.
        equal(results.length, 0);
        await Promise.resolve();
      },
    );
  },
);

Deno.test("toolHookGate() opens no sandbox for a tool no hook names; an unstartable guard blocks", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(
      join(ws.home, "settings.json"),
      JSON.stringify({
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [command("true")] }] },
      }),
    );
    let opened = 0;
    // The hooks a conversation runs, read as it reads them.
    const active = loadHooks({ ternHome: ws.home, workspace: ws.dir }, () => {}).then((loaded) =>
      loaded.active
    );
    const find = toolHookGate(() => active, () => {
      opened++;
      return Promise.reject(new Error("no sandbox here"));
    });
    equal(await find("PreToolUse", "spawn_agent"), undefined);
    equal(await find("PostToolUse", "wait_agent"), undefined);
    equal(opened, 0);
    // A hook that names the tool fires in the sandbox; one that cannot start there blocks.
    const gate = await find("PreToolUse", "bash");
    equal(opened, 1);
    const ctx = { callId: "c1", signal: new AbortController().signal } as ToolContext;
    const pre = await gate?.preToolUse("bash", { command: "ls" }, ctx);
    match(pre?.block ?? "", /PreToolUse hooks of "bash" could not run: no sandbox here/);
  } finally {
    await ws.cleanup();
  }
});
