/**
 * `tern rpc`: "allow for this session" remembers more than the one call shown (a command's
 * prefix, the whole tool, the host), and `permission_request` says how much (`rememberAs`), so
 * a client can show the person what they agree to. A second, different call inside that scope
 * then runs unasked: what was said is what was allowed.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { spawnLineProcess } from "../support/line_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";

const bash = (id: string, command: string) => ({
  toolCalls: [{ id, name: "bash", arguments: JSON.stringify({ command }) }],
});

testWith(
  [bwrapNeed],
  "tern rpc's permission_request names what 'session' allows, and a covered call runs unasked",
  async () => {
    const server = await startScriptedServer((request: ModelRequest, index: number) => {
      if (index === 0) return bash("b0", "touch one.txt");
      if (index === 1) return bash("b1", "touch two.txt");
      return { text: `done ${request.messages.filter((m) => m.role === "tool").length}` };
    }, { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    const rpc = spawnLineProcess(
      ["rpc", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "ask"],
      { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" } },
    );
    try {
      await rpc.waitFor((line) => line.type === "ready");
      await rpc.send({ type: "prompt", id: 1, message: "touch them" });
      const asked = await rpc.waitFor((line) => line.type === "permission_request");
      equal(asked.summary, "touch one.txt");
      equal(asked.rememberable, true);
      equal(asked.rememberAs, 'any "touch …" command');
      await rpc.send({
        type: "answer_permission",
        id: 2,
        requestId: asked.requestId,
        answer: "session",
      });
      const done = await rpc.waitFor((line) => line.type === "response" && line.id === 1);
      equal((done.data as Record<string, unknown>).text, "done 2");
      // `touch two.txt` was covered by the answer: it ran without a second request.
      equal(rpc.lines.filter((line) => line.type === "permission_request").length, 1);
      ok(await Deno.stat(join(ws.dir, "one.txt")).then(() => true, () => false));
      ok(await Deno.stat(join(ws.dir, "two.txt")).then(() => true, () => false));
      equal((await rpc.finish()).code, 0);
      deepEqual(rpc.invalid, []);
    } finally {
      await rpc.kill().catch(() => {});
      await server.close();
      await ws.cleanup();
    }
  },
);

Deno.test("tern rpc's permission_request has no rememberAs when 'session' cannot be answered", async () => {
  const server = await startScriptedServer([
    bash("b0", "touch a.txt; rm -f b.txt"),
    { text: "denied" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const rpc = spawnLineProcess(
    ["rpc", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "ask"],
    { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" } },
  );
  try {
    await rpc.waitFor((line) => line.type === "ready");
    await rpc.send({ type: "prompt", id: 1, message: "touch it" });
    const asked = await rpc.waitFor((line) => line.type === "permission_request");
    equal(asked.rememberable, false);
    ok(!("rememberAs" in asked), JSON.stringify(asked));
    await rpc.send({ type: "answer_permission", requestId: asked.requestId, answer: "deny" });
    await rpc.waitFor((line) => line.type === "response" && line.id === 1);
    equal((await rpc.finish()).code, 0);
  } finally {
    await rpc.kill().catch(() => {});
    await server.close();
    await ws.cleanup();
  }
});
