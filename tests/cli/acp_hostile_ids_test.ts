/**
 * `tern acp` against a model that uses one tool call id again across turns: a loaded session
 * replays each call under an id of its own, and a call after the load gets one no replayed card
 * has, so an editor that updates its cards by id never shows one call's result on another.
 * Driven by the ACP SDK's own client.
 */
import { methods } from "@agentclientprotocol/sdk";
import { deepEqual, equal } from "node:assert/strict";
import { updatesOf, withBench, writeCall } from "../support/acp_bench.ts";

Deno.test("tern acp replays a loaded session's calls under ids of their own, and a later call under a new one", async () => {
  await withBench([
    writeCall("x", "a.txt", "one\n"),
    { text: "first" },
    writeCall("x", "b.txt", "two\n"),
    { text: "second" },
    writeCall("x", "c.txt", "three\n"),
    { text: "third" },
  ], async ({ connect, dir }) => {
    let sessionId = "";
    await connect(async (ctx) => {
      ({ sessionId } = await ctx.request(methods.agent.session.new, { cwd: dir, mcpServers: [] }));
      for (const text of ["first", "second"]) {
        await ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text }],
        });
      }
    });
    await connect(async (ctx, editor) => {
      await ctx.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
      const replayed = updatesOf(editor, "tool_call").map((update) =>
        update.sessionUpdate === "tool_call" ? update.toolCallId : ""
      );
      equal(replayed.length, 2);
      equal(new Set(replayed).size, 2, `replayed calls share an id: ${replayed}`);
      // Each replayed result updates its own call's card.
      const results = updatesOf(editor, "tool_call_update").map((update) =>
        update.sessionUpdate === "tool_call_update" ? update.toolCallId : ""
      );
      deepEqual(results, replayed);
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "third" }],
      });
      const live = updatesOf(editor, "tool_call").map((update) =>
        update.sessionUpdate === "tool_call" ? update.toolCallId : ""
      ).slice(2);
      equal(live.length, 1);
      equal(replayed.includes(live[0]), false, `a new call reuses a replayed id: ${live[0]}`);
      equal(editor.asked[0].toolCall.toolCallId, live[0]);
    });
  }, { args: ["--mode", "ask"] });
});
