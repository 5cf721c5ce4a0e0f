/**
 * A parent killed with SIGKILL while its child runs, continued after the child finished: the
 * continued turn's first request already shows the child's result, recovered from the child's
 * session, though the model never calls wait_agent.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, firstUser, ternChildPids, until } from "./_helpers.ts";

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
const shown = (request: ModelRequest) => allText(request).split("[subagent ").length - 1;

/** Whether a `tern child` process for the server at `baseUrl` runs. */
function childRuns(baseUrl: string): boolean {
  return ternChildPids(baseUrl).length > 0;
}

Deno.test("tern run -c shows a child that finished after its parent was killed at the turn's start", async () => {
  const ws = await tempWorkspace();
  let parent: Deno.ChildProcess | undefined;
  const script = (request: ModelRequest): ScriptedReply => {
    if (isChild(request)) return { text: "child result R-9" };
    const text = allText(request);
    if (text.includes("NEXT TASK")) return { text: "parent done" };
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "job", message: "CHILD do the job" }, "s1");
    }
    return call("wait_agent", {}, `w${request.messages.length}`);
  };
  const beforeReply = async (request: ModelRequest) => {
    if (!isChild(request) || parent === undefined) return;
    // The child answers only after its parent is dead.
    parent.kill("SIGKILL");
    await parent.status;
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0, beforeReply });
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
  const run = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
  try {
    parent = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...declaredFlags(env, { cwd: ws.dir, args: [...run, "go"] }),
        join(ROOT, "main.ts"),
        ...run,
        "go",
      ],
      cwd: ws.dir,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    equal((await parent.status).signal, "SIGKILL");
    await until(() => !childRuns(server.baseUrl), "the orphaned child to finish");
    const resumed = await runTern([...run, "-c", "NEXT TASK"], { cwd: ws.dir, env });
    equal(resumed.code, 0, resumed.stderr);
    const first = server.requests.map((r) => r.modelRequest)
      .find((request) => !isChild(request) && allText(request).includes("NEXT TASK"))!;
    equal(shown(first), 1);
    ok(allText(first).includes("child result R-9"));
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
