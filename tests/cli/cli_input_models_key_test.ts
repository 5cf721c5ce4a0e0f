/**
 * A key with a line break in it (pasted from a file with Windows line ends, or two lines of a
 * .env joined) makes `fetch` refuse the request with "Invalid header value: "Bearer <key>"",
 * the break shown as a space. `tern models` shows why it could not list the server's models,
 * in text and JSON, without that key.
 */
import { equal, match, ok } from "node:assert/strict";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("listModels() never prints a key that holds a line break in the server's error", async () => {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = {
      HOME: ws.home,
      TERN_HOME: ws.home,
      TERN_API_KEY: "sk-proj-SECRETabcdef1234567890\nSECONDLINE12345",
    };
    for (const json of [false, true]) {
      const run = await runTern(
        ["models", "--base-url", server.baseUrl, ...(json ? ["--json"] : [])],
        { cwd: ws.dir, env },
      );
      equal(run.code, 0, run.stderr);
      const shown = run.stdout + run.stderr;
      match(shown, /header value/);
      ok(!shown.includes("SECRETabcdef"), shown);
      ok(!shown.includes("SECONDLINE"), shown);
      if (json) JSON.parse(run.stdout);
    }
    equal(server.requests.length, 0);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
