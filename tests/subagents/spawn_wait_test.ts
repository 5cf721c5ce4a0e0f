/** spawn_agent and wait_agent through the real CLI: a parent `tern run` and its `tern child`. */
import { deepEqual, equal, ok } from "node:assert/strict";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, deliveries, firstUser, records, sessionsOf } from "./_helpers.ts";

Deno.test("spawn_agent() runs a child whose answer wait_agent() returns once", async () => {
  const script = (request: ModelRequest): ScriptedReply => {
    if (firstUser(request).startsWith("CHILD")) {
      return { text: "child found 42" };
    }
    const text = allText(request);
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "count", message: "CHILD count things" }, "s1");
    }
    if (!text.includes("child found 42")) return call("wait_agent", {}, "w1");
    return { text: "parent done" };
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
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
      { cwd: ws.dir, env },
    );
    equal(run.code, 0, run.stderr);
    equal(JSON.parse(run.stdout).text, "parent done");
    const sessions = await sessionsOf(ws.home);
    equal(sessions.length, 2);
    const parent = sessions.find((s) => s.header.subagentOf === undefined)!;
    const child = sessions.find((s) => s.header.subagentOf !== undefined)!;
    equal(child.header.subagentOf?.sessionId, parent.header.id);
    const [spawn] = records(parent.entries, "spawn");
    const [completion] = records(parent.entries, "completion");
    equal(spawn.childSessionId, child.header.id);
    equal(completion.status, "completed");
    equal(completion.content, "child found 42");
    equal(deliveries(parent.entries, String(spawn.runId)).length, 1);
    // The child saw only its message, never the parent's transcript, and only its tools.
    const childRequest = server.requests.find((r) =>
      firstUser(r.modelRequest).startsWith("CHILD")
    )!;
    ok(!allText(childRequest.modelRequest).includes("go"));
    deepEqual(childRequest.modelRequest.tools?.map((tool) => tool.name).sort(), [
      "glob",
      "grep",
      "read",
    ]);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
