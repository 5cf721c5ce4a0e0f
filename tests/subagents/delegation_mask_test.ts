/**
 * A subagent's task name is the model's words: where it quotes a key tern holds, the
 * approval a spawn needs in ASK mode and its refusal show it masked, never whole.
 */
import { equal, ok } from "node:assert/strict";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call } from "./_helpers.ts";

const KEY = "sk-test-SECRETKEY1234567890";

function script(request: ModelRequest): ScriptedReply {
  if (!allText(request).includes("Cannot give subagent")) {
    return call("spawn_agent", {
      task_name: KEY,
      message: "CHILD do it",
      tools: ["bash"],
    }, "s1");
  }
  return { text: "parent done" };
}

Deno.test("an ASK spawn that quotes a key in its task name is refused with the key masked", async () => {
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY };
    const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "ask", "go"];
    const run = await runTern(args, { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    const second = server.requests.at(-1)!.modelRequest;
    const refusal = allText(second);
    ok(refusal.includes('Cannot give subagent "task"'), refusal);
    ok(!refusal.includes(KEY), refusal);
    ok(!run.stdout.includes(KEY) && !run.stderr.includes(KEY), run.stdout + run.stderr);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
