/**
 * `tern acp` against an editor that asks to load a session it holds in another directory: the
 * load is refused as invalid params before anything is closed, and the session goes on (its
 * running turn is not cancelled). Driven by the ACP SDK's own client.
 */
import { methods, RequestError } from "@agentclientprotocol/sdk";
import { deepEqual, equal, match } from "node:assert/strict";
import { withBench } from "../support/acp_bench.ts";

Deno.test("tern acp refuses session/load of a held session in another cwd, and keeps the session", async () => {
  const other = await Deno.realPath(await Deno.makeTempDir());
  try {
    await withBench([{ text: "first" }, { text: "second" }], async ({ connect, dir }) => {
      await connect(async (ctx) => {
        const { sessionId } = await ctx.request(methods.agent.session.new, {
          cwd: dir,
          mcpServers: [],
        });
        const first = await ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "first" }],
        });
        equal(first.stopReason, "end_turn");
        const refused = await ctx.request(methods.agent.session.load, {
          sessionId,
          cwd: other,
          mcpServers: [],
        }).then(() => undefined, (error: RequestError) => error);
        // The session is still this connection's.
        const second = await ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "second" }],
        });
        equal(second.stopReason, "end_turn");
        equal(refused?.code, -32602);
        match(refused.message, /belongs to ".*", not ".*"/);
      });
    });
  } finally {
    await Deno.remove(other, { recursive: true });
  }
});

Deno.test("tern acp refuses a prompt that comes while session/load closes the session it names", async () => {
  await withBench(
    [{ text: "first" }, { text: "never asked" }],
    async ({ connect, dir, requests }) => {
      await connect(async (ctx) => {
        const { sessionId } = await ctx.request(methods.agent.session.new, {
          cwd: dir,
          mcpServers: [],
        });
        await ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "first" }],
        });
        // The load closes the held session first; the prompt right behind it finds that one.
        const [loaded, racing] = await Promise.all([
          ctx.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] }),
          ctx.request(methods.agent.session.prompt, {
            sessionId,
            prompt: [{ type: "text", text: "racing" }],
          }).then(() => undefined, (error: RequestError) => error),
        ]);
        deepEqual(loaded, {});
        match(racing?.message ?? "no error", /is closed/);
        equal(requests.length, 1);
      });
    },
  );
});
