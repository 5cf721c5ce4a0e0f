/**
 * `tern acp` loading a session that holds a key tern did not hold when it was written (it was
 * set up later, or a tool printed it then): the replayed history is masked for the keys tern
 * holds now, as `tern sessions show` is, so the editor is never sent the key. Driven by the ACP
 * SDK's own client.
 */
import { methods } from "@agentclientprotocol/sdk";
import { equal, ok } from "node:assert/strict";
import { Session } from "../../src/session/session.ts";
import { withBench } from "../support/acp_bench.ts";

const KEY = "sk-test-learned-later-0123456789abcdef";

Deno.test("tern acp masks a key tern holds now in a loaded session's replayed history", async () => {
  await withBench([], async ({ connect, dir, home }) => {
    const session = Session.create(home, { cwd: dir, ternVersion: "test" });
    session.append({ type: "message", message: { role: "user", content: `use ${KEY} please` } });
    // Two calls, each with the key for its id: they stay two calls.
    for (const n of [1, 2]) {
      session.append({
        type: "message",
        message: {
          role: "assistant",
          content: `Calling with ${KEY}.`,
          toolCalls: [{
            id: KEY,
            name: "bash",
            arguments: JSON.stringify({ command: `echo ${KEY} ${n}` }),
          }],
        },
      });
      session.append({
        type: "message",
        message: { role: "tool", toolCallId: KEY, name: "bash", content: `SUCCEEDED\n${KEY}\n` },
      });
    }
    session.close();
    await connect(async (ctx, editor) => {
      await ctx.request(methods.agent.session.load, {
        sessionId: session.id,
        cwd: dir,
        mcpServers: [],
      });
      const sent = JSON.stringify(editor.updates);
      equal(sent.includes(KEY), false, sent);
      // Every part was replayed, masked: the person's words, the answers, the calls and results.
      equal(editor.updates.length, 7, sent);
      ok(sent.includes("[REDACTED"), sent);
      const ids = editor.updates.map(({ update }) =>
        update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update"
          ? update.toolCallId
          : ""
      ).filter((id) => id !== "");
      equal(ids.length, 4, sent);
      equal(ids[0], ids[1], sent);
      equal(ids[2], ids[3], sent);
      ok(ids[0] !== ids[2], `two calls share the id ${ids[0]}`);
    });
  }, { env: { TERN_API_KEY: KEY } });
});
