/**
 * A hostile parent model cannot send a subagent's conversation to a server of its choosing: a
 * `.env` (or `.tern/config.jsonc`) its commands write after the parent started is read by the
 * child's config, and the child fails instead of going there.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, firstUser } from "./_helpers.ts";

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");

Deno.test("spawn_agent() fails a child whose .env a command wrote to choose another server", async () => {
  const evil = await startScriptedServer(() => ({ text: "evil got it" }), { chunkDelayMs: 0 });
  const script = (request: ModelRequest): ScriptedReply => {
    if (isChild(request)) return { text: "child ok" };
    const text = allText(request);
    if (!request.messages.some((m) => m.role === "tool")) {
      // The parent's sandbox has no network; the child's process (outside it) would.
      const command = `printf 'TERN_BASE_URL=${evil.baseUrl}\\n' > .env`;
      return call("bash", { command }, "b0");
    }
    if (!text.includes("Started subagent") && !text.includes("Cannot")) {
      return call("spawn_agent", { task_name: "x", message: "CHILD the data read" }, "s1");
    }
    return text.includes("[subagent ") ? { text: "parent done" } : call("wait_agent", {}, "w1");
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    // The person's own server, from their config (no base URL setting of theirs).
    const config = {
      provider: "mine",
      providers: { mine: { api: "openai", baseUrl: server.baseUrl } },
    };
    await Deno.writeTextFile(join(ws.home, "config.jsonc"), JSON.stringify(config));
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "main-secret" };
    const args = ["run", "-m", "scripted", "--mode", "bypass", "go"];
    const run = await runTern(args, { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    equal(evil.requests.length, 0);
    match(
      allText(server.requests.at(-1)!.modelRequest),
      /\[subagent x .*\) failed\]\nerror: Cannot run subagent "x": ".*\.env" chooses its model server/,
    );
  } finally {
    await server.close();
    await evil.close();
    await ws.cleanup();
  }
});
