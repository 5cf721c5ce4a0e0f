/**
 * `tern rpc`'s `list_sessions` quotes each session's first request: one that holds a key tern did
 * not hold when it was written is masked for the keys tern holds now, as `tern sessions list`
 * does.
 */
import { equal, ok } from "node:assert/strict";
import { Session } from "../../src/session/session.ts";
import { spawnLineProcess } from "../support/line_process.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-test-learned-later-0123456789abcdef";

Deno.test("tern rpc list_sessions masks a key tern holds now in a session's first request", async () => {
  const server = await startScriptedServer([], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
  session.append({ type: "message", message: { role: "user", content: `use ${KEY} please` } });
  session.close();
  const rpc = spawnLineProcess(["rpc", "--base-url", server.baseUrl, "-m", "scripted"], {
    cwd: ws.dir,
    env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY },
  });
  let finished = false;
  try {
    await rpc.waitFor((line) => line.type === "ready");
    for (const all of [false, true]) {
      await rpc.send({ type: "list_sessions", id: String(all), all });
      const response = await rpc.waitFor((line) => line.id === String(all));
      const sent = JSON.stringify(response);
      equal(response.ok, true, sent);
      equal(sent.includes(KEY), false, sent);
      ok(sent.includes("use [REDACTED"), sent);
    }
    const { code, stderr } = await rpc.finish();
    finished = true;
    equal(code, 0, stderr);
  } finally {
    if (!finished) await rpc.kill();
    await server.close();
    await ws.cleanup();
  }
});
