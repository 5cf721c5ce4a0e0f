/**
 * A real `tern run --no-sandbox` whose bash command starts a process in a session of its own
 * (`setsid`): the process ends with the command, not after tern. Against the scripted model
 * server on 127.0.0.1.
 */
import { equal, match } from "node:assert/strict";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { assertNoProcessWith, killWith, marker } from "./_bwrap_helpers.ts";

Deno.test("tern run --no-sandbox ends a setsid process its bash command started", async () => {
  const ws = await tempWorkspace();
  const mark = marker();
  const command = `setsid sleep ${mark} </dev/null >/dev/null 2>&1 & ` +
    `until pgrep -f "^sleep ${mark}" >/dev/null; do sleep 0.02; done; echo started`;
  let result = "";
  const server = await startScriptedServer(
    ((request: ModelRequest, i: number) => {
      if (i > 0) result = String(request.messages.at(-1)?.content ?? "");
      if (i > 0) return { text: "done" };
      return {
        toolCalls: [{ id: "c0", name: "bash", arguments: JSON.stringify({ command }) }],
      };
    }) as unknown as ScriptedReply[],
    { chunkDelayMs: 0 },
  );
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
        "--no-sandbox",
        "go",
      ],
      { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" } },
    );
    equal(run.code, 0, run.stderr);
    match(result, /started/);
    await assertNoProcessWith(`sleep ${mark}`);
  } finally {
    await server.close();
    await killWith(`sleep ${mark}`);
    await ws.cleanup();
  }
});
