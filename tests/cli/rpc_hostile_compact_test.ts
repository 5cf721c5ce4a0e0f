/**
 * `tern rpc`: a compaction whose summary request a server never answers can be aborted. The
 * abort is read while the compaction runs, stops the summary request, and leaves the session
 * as it was (no fallback summary written in its place); nothing else changes the session
 * meanwhile.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { spawnLineProcess } from "../support/line_process.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";

type Line = Record<string, unknown>;

Deno.test("tern rpc abort stops a compaction and leaves the session as it was", async () => {
  const padding = "lorem ipsum dolor sit amet ".repeat(900);
  const { promise: summaryAsked, resolve: askedForSummary } = Promise.withResolvers<void>();
  const script = (request: ModelRequest): ScriptedReply => {
    if (request.tools.length > 0) return { text: "noted" };
    askedForSummary();
    return { fault: "hang" };
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const rpc = spawnLineProcess(["rpc", "--base-url", server.baseUrl, "-m", "scripted"], {
    cwd: ws.dir,
    env: {
      TERN_HOME: ws.home,
      HOME: ws.home,
      TERN_API_KEY: "sk-test",
      TERN_CONTEXT_WINDOW: "40000",
      TERN_COMPACT_AT: "0.95",
    },
  });
  const responseTo = (id: number) =>
    rpc.waitFor((line) => line.type === "response" && line.id === id);
  let finished = false;
  try {
    await rpc.waitFor((line) => line.type === "ready");
    for (const id of [1, 2, 3, 4, 5, 6]) {
      await rpc.send({ type: "prompt", id, message: `part ${id}: ${padding}` });
      equal(((await responseTo(id)).data as Line).exitReason, "COMPLETED");
    }
    await rpc.send({ type: "get_state", id: 7 });
    const state = (await responseTo(7)).data as Line;
    const before = await Deno.readTextFile(state.sessionPath as string);
    await rpc.send({ type: "compact", id: 9 });
    await summaryAsked;
    // The session is not changed under a running compaction.
    await rpc.send({ type: "prompt", id: 10, message: "more" });
    const refused = await responseTo(10);
    equal(refused.ok, false);
    match(refused.error as string, /compact/);
    await rpc.send({ type: "abort", id: 11 });
    deepEqual((await responseTo(11)).data, { aborted: true });
    const compacted = await responseTo(9);
    equal(compacted.ok, false, JSON.stringify(compacted));
    match(compacted.error as string, /cancel/i);
    equal(await Deno.readTextFile(state.sessionPath as string), before, "the session is unchanged");
    ok(!rpc.lines.some((line) => (line.event as Line | undefined)?.type === "compaction"));
    // The session goes on.
    await rpc.send({ type: "prompt", id: 12, message: "go on" });
    equal(((await responseTo(12)).data as Line).exitReason, "COMPLETED");
    const { code } = await rpc.finish();
    finished = true;
    equal(code, 0);
  } finally {
    if (!finished) await rpc.kill();
    await server.close();
    await ws.cleanup();
  }
});
