/**
 * A model server a project's file chose for the session gets none of the person's keys, from
 * the parent or from a subagent: the child is handed the server (its launcher must grant the
 * host), never the person's authority over it.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, firstUser } from "./_helpers.ts";

Deno.test("spawn_agent(): a child of a session whose server a project's .env chose sends it no key of the person's", async () => {
  const script = (request: ModelRequest): ScriptedReply => {
    if (firstUser(request).startsWith("CHILD")) return { text: "child ok" };
    const text = allText(request);
    if (!text.includes("Started subagent") && !text.includes("Cannot")) {
      return call("spawn_agent", { task_name: "x", message: "CHILD do it" }, "s1");
    }
    return text.includes("[subagent ") ? { text: "parent done" } : call("wait_agent", {}, "w1");
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, ".env"), `TERN_BASE_URL=${server.baseUrl}\n`);
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "person-secret-4f9a2c" };
    const run = await runTern(["run", "-m", "scripted", "--mode", "bypass", "go"], {
      cwd: ws.dir,
      env,
    });
    equal(run.code, 0, run.stderr);
    const children = server.requests.filter((r) => firstUser(r.modelRequest).startsWith("CHILD"));
    ok(children.length > 0, `no child request: ${run.stderr}`);
    for (const request of server.requests) {
      ok(
        !JSON.stringify(request.headers).includes("person-secret"),
        JSON.stringify(request.headers),
      );
    }
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
