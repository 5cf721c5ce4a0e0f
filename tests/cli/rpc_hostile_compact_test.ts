/**
 * `tern rpc`: a compaction whose summary request a server never answers, or streams slowly, can
 * be aborted. The abort is read while the compaction runs, stops the summary request, and leaves
 * the session as it was (no fallback summary written in its place); nothing else changes the
 * session meanwhile.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { spawnLineProcess } from "../support/line_process.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";

type Line = Record<string, unknown>;

Deno.test("tern rpc abort stops a compaction and leaves the session as it was", async () => {
  await abortedCompaction({ fault: "hang" }, 0);
});

Deno.test("tern rpc abort of a compaction whose summary streams writes no summary", async () => {
  const summary = "## Goal\nThe parts.\n## Progress\nParts sent and noted.\n".repeat(20);
  await abortedCompaction({ text: summary }, 200);
});

/**
 * Compacts a session of six long prompts, its summary request answered with `summary` (each
 * chunk `chunkMs` apart), aborts it while the summary request is under way and checks nothing
 * changed.
 */
async function abortedCompaction(summary: ScriptedReply, chunkMs: number): Promise<void> {
  const padding = "lorem ipsum dolor sit amet ".repeat(900);
  const { promise: summaryAsked, resolve: askedForSummary } = Promise.withResolvers<void>();
  const script = (request: ModelRequest): ScriptedReply => {
    if (request.tools.length > 0) return { text: "noted" };
    askedForSummary();
    return summary;
  };
  const server = await startScriptedServer(script, { chunkDelayMs: chunkMs });
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
    // Past the first chunks of a streamed summary, before its last.
    await new Promise((resolve) => setTimeout(resolve, chunkMs * 2.5));
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
}
