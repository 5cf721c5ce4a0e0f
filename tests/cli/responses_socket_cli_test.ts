/**
 * The Responses API over WebSocket through the real launcher's permissions (tern's Deno flags
 * from bin/_env.sh): the socket code loads and later rounds go over the socket. A package that
 * reads an environment variable the flags do not grant fails its import, and every round would
 * quietly go over HTTP.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern run with transport websocket sends its later rounds over the socket", async () => {
  let overSocket = 0;
  // Rounds of `echo` until a request came over the socket (it opens while the first rounds run
  // over HTTP), bounded; then an answer.
  const server = await startScriptedServer((request) => {
    const round = request.messages.filter((m) => m.role === "tool").length;
    if (overSocket > 1 || round >= 150) return { text: "done" };
    const args = JSON.stringify({ command: `echo ${round}` });
    return { toolCalls: [{ id: `c${round}`, name: "bash", arguments: args }] };
  }, {
    chunkDelayMs: 0,
    onRequest: (recorded) => {
      if (recorded.transport === "websocket") overSocket++;
    },
  });
  const ws = await tempWorkspace();
  try {
    await Deno.mkdir(ws.home, { recursive: true });
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({
        provider: "oa",
        model: "scripted",
        providers: {
          oa: {
            api: "openai-responses",
            baseUrl: server.baseUrl,
            transport: "websocket",
            apiKeyEnv: "TERN_API_KEY",
          },
        },
      }),
    );
    // A hang, not a speed limit: an idle timer left armed per socket message once kept tern
    // alive for two minutes after its answer.
    const hung = AbortSignal.timeout(60_000);
    const run = await runTern(
      ["run", "--mode", "bypass", "--max-rounds", "200", "-o", "json", "go"],
      { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" }, signal: hung },
    );
    ok(!hung.aborted, "tern did not exit within a minute of its answer");
    equal(run.code, 0, run.stderr);
    ok(overSocket > 0, `no request came over the socket in ${server.requests.length} rounds`);
    equal(server.requests[0].transport, undefined, "the first request goes over HTTP");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
