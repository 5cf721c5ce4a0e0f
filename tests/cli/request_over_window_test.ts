/**
 * `tern run` with a request no compaction brings within the context window (here a long
 * AGENTS.md under a small `TERN_CONTEXT_WINDOW`): the turn ends with tern's own error naming
 * both sizes and what to shorten, nothing is sent, and the session keeps the person's message
 * for `tern run -c` once the file is shorter. The real CLI against the scripted server.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern run sends no request over the context window, exits 7 naming both sizes, and -c goes on", async () => {
  const ws = await tempWorkspace();
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k", TERN_CONTEXT_WINDOW: "8000" };
  const tern = (args: string[]) =>
    runTern(["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", ...args], {
      cwd: ws.dir,
      env,
      signal: AbortSignal.timeout(60_000),
    });
  try {
    const agents = join(ws.dir, "AGENTS.md");
    await Deno.writeTextFile(agents, "Follow every rule of the house style. ".repeat(2_000));
    const refused = await tern(["first task TASK-4e1b"]);
    // Before: the request went out, and the server's answer (or refusal) was the turn's.
    equal(refused.code, 7, refused.stdout + refused.stderr);
    match(
      refused.stderr,
      /Cannot send the request: about \d+ tokens \(estimated\), more than the model's context window of 8000/,
    );
    match(refused.stderr, /the system prompt, with context files such as AGENTS\.md/);
    equal(server.requests.length, 0);

    await Deno.writeTextFile(agents, "Be brief.");
    const goesOn = await tern(["-c", "go on"]);
    equal(goesOn.code, 0, goesOn.stderr);
    equal(server.requests.length, 1);
    // Nothing was lost: the first task is in the conversation sent.
    ok(JSON.stringify(server.requests[0].body).includes("TASK-4e1b"));
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
