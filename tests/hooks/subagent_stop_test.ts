/**
 * The SubagentStop hook runs in the parent when a subagent's run ends, with the run's identity
 * and status on stdin. The real `tern run`, a real child, the scripted model server.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapTest } from "../sandbox/_bwrap_helpers.ts";

bwrapTest(
  "a SubagentStop hook runs when a subagent's run ends, told which run and how",
  async () => {
    const ws = await tempWorkspace();
    const out = join(ws.dir, "substop.json");
    await Deno.writeTextFile(
      join(ws.home, "settings.json"),
      JSON.stringify({
        hooks: { SubagentStop: [{ hooks: [{ type: "command", command: `cat > '${out}'` }] }] },
      }),
    );
    const script = (request: ModelRequest): ScriptedReply => {
      const text = JSON.stringify(request.messages);
      if (text.includes("CHILD-TASK") && !text.includes("spawn_agent")) {
        return {
          text: "child done",
        };
      }
      const results = request.messages.filter((m) => m.role === "tool").length;
      if (results === 0) {
        return {
          toolCalls: [{
            id: "s1",
            name: "spawn_agent",
            arguments: JSON.stringify({ task_name: "job", message: "CHILD-TASK: say done" }),
          }],
        };
      }
      if (results === 1) {
        return {
          toolCalls: [{ id: "w1", name: "wait_agent", arguments: '{"timeout_ms": 60000}' }],
        };
      }
      return { text: "parent done" };
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
        { cwd: ws.dir, env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-test-sub" } },
      );
      equal(run.code, 0, run.stderr);
      equal(JSON.parse(run.stdout).text, "parent done");
      const input = JSON.parse(await Deno.readTextFile(out));
      equal(input.hook_event_name, "SubagentStop");
      equal(input.task_name, "job");
      equal(input.status, "completed");
      ok(typeof input.run_id === "string" && input.run_id !== "", JSON.stringify(input));
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);
