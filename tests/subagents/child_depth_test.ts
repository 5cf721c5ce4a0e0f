/**
 * A child never spawns children of its own (no fork bomb of subagents): whatever tool names its
 * request carries, it is offered neither subagent tool, nor anything but the built-ins.
 */
import { equal, ok } from "node:assert/strict";
import {
  CHILD_BASE_TOOLS,
  CHILD_PROTOCOL_VERSION,
  type ChildRequest,
} from "../../src/harness/subagents/protocol.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern child offers no subagent tool, even when its request names one", async () => {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const request: ChildRequest = {
      type: "request",
      version: CHILD_PROTOCOL_VERSION,
      taskName: "nest",
      agentId: "agent-1",
      childSessionId: crypto.randomUUID(),
      runId: "run-1",
      parentSession: { id: crypto.randomUUID(), path: "/nowhere/parent.jsonl" },
      prompt: "spawn more",
      goal: "spawn more",
      cwd: ws.dir,
      tools: { allow: ["spawn_agent", "wait_agent", "mcp__evil__run", "skill", "bash"] },
      permissions: {
        profile: ":workspace",
        noSandbox: false,
        parentMode: "bypass",
        autoNetwork: "never",
        autoAskRules: "reviewer",
        changes: [],
        escalationTimeoutMs: 1000,
      },
      timeoutMs: 60_000,
      model: { model: "scripted", thinking: "off", baseUrl: server.baseUrl },
    };
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
    const run = await runTernWithInput(
      ["child", "--base-url", server.baseUrl],
      JSON.stringify(request) + "\n",
      { cwd: ws.dir, env },
    );
    equal(run.code, 0, run.stderr);
    const offered = server.requests[0].modelRequest.tools.map((tool) => tool.name).sort();
    equal(offered.filter((name) => /agent|mcp__|skill/.test(name)).length, 0, `${offered}`);
    ok(CHILD_BASE_TOOLS.every((name) => offered.includes(name)), `${offered}`);
    ok(offered.includes("bash"), `${offered}`);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
