/**
 * `tern acp` against an editor that asks for a session it cannot have: an unknown id is ACP's
 * "resource not found", another directory's session or one another load holds is invalid
 * params, each with tern's reason; never an "internal error", which says tern failed. Driven by
 * the ACP SDK's own client.
 */
import { methods, RequestError } from "@agentclientprotocol/sdk";
import { equal, match, ok } from "node:assert/strict";
import { withBench } from "../support/acp_bench.ts";

/** The error `promise` rejects with, as a RequestError. */
async function refusal(promise: Promise<unknown>): Promise<RequestError> {
  const error = await promise.then(() => undefined, (error: unknown) => error);
  ok(error instanceof RequestError, `not refused: ${String(error)}`);
  return error;
}

Deno.test("tern acp answers a session/load it cannot do with the editor's error, not an internal one", async () => {
  await withBench([{ text: "one" }, { text: "two" }], async ({ connect, dir }) => {
    const other = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-other-" }));
    try {
      let sessionId = "";
      await connect(async (ctx) => {
        ({ sessionId } = await ctx.request(methods.agent.session.new, {
          cwd: dir,
          mcpServers: [],
        }));
        await ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "hi" }],
        });
      });
      await connect(async (ctx) => {
        const unknown = await refusal(ctx.request(methods.agent.session.load, {
          sessionId: "00000000-0000-4000-8000-000000000000",
          cwd: dir,
          mcpServers: [],
        }));
        equal(unknown.code, -32002, unknown.message);
        const elsewhere = await refusal(
          ctx.request(methods.agent.session.load, { sessionId, cwd: other, mcpServers: [] }),
        );
        equal(elsewhere.code, -32602, elsewhere.message);
        // Two loads at once: one holds the session, the other is told it is in use.
        const [first, second] = await Promise.allSettled([
          ctx.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] }),
          ctx.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] }),
        ]);
        const busy = [first, second].find((result) => result.status === "rejected");
        ok(busy !== undefined, "both loads held the session");
        const reason = busy.reason as RequestError;
        equal(reason.code, -32602, reason.message);
        match(reason.message, /in use/);
        // The session still answers.
        const { stopReason } = await ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "again" }],
        });
        equal(stopReason, "end_turn");
      });
    } finally {
      await Deno.remove(other, { recursive: true });
    }
  });
});
