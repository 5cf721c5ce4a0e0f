/**
 * `tern rpc`: a key the model writes reaches the client masked in every field of a permission
 * request, the policy's reason included (it quotes the path a command writes).
 */
import { equal, match, ok } from "node:assert/strict";
import { spawnLineProcess } from "../support/line_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-test-SECRETKEY1234567890";

testWith(
  [bwrapNeed],
  "tern rpc masks a key the model writes in a permission request's reason",
  async () => {
    const command = `echo hi > /tmp/${KEY}.txt`;
    const server = await startScriptedServer([
      { toolCalls: [{ id: "b0", name: "bash", arguments: JSON.stringify({ command }) }] },
      { text: "denied" },
    ], { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    const rpc = spawnLineProcess(
      ["rpc", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "ask"],
      { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY } },
    );
    let finished = false;
    try {
      await rpc.waitFor((line) => line.type === "ready");
      await rpc.send({ type: "prompt", id: 1, message: "say hi" });
      const asked = await rpc.waitFor((line) => line.type === "permission_request");
      await rpc.send({
        type: "answer_permission",
        id: 2,
        requestId: asked.requestId,
        answer: "deny",
      });
      await rpc.waitFor((line) => line.type === "response" && line.id === 1);
      const { code } = await rpc.finish();
      finished = true;
      equal(code, 0);
      match(String(asked.reason), /redirection ">" writes "\/tmp\/\[REDACTED\]\.txt"/);
      // What the client shows is not all that runs: the request says so.
      equal(asked.hiddenKeys, true);
      const shown = JSON.stringify(rpc.lines);
      ok(!shown.includes("SECRETKEY1234567890"), shown);
    } finally {
      if (!finished) await rpc.kill();
      await server.close();
      await ws.cleanup();
    }
  },
);
