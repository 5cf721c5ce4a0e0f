/**
 * `tern acp` against an editor that opens sessions without end: each holds its models, sandbox
 * and MCP servers, so one connection holds at most MAX_OPEN_SESSIONS; `session/close` frees one.
 * Driven by the ACP SDK's own client.
 */
import { methods, RequestError } from "@agentclientprotocol/sdk";
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { MAX_OPEN_SESSIONS } from "../../src/cli/acp/server.ts";
import { withBench } from "../support/acp_bench.ts";

Deno.test("tern acp opens no more than MAX_OPEN_SESSIONS sessions at once, and session/close frees one", async () => {
  await withBench([{ text: "answer" }], async ({ connect, dir }) => {
    await connect(async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: {},
      });
      ok(init.agentCapabilities?.sessionCapabilities?.close, "session/close is not announced");
      // Asked all at once: sessions still opening count too.
      const opened = await Promise.allSettled(
        Array.from(
          { length: MAX_OPEN_SESSIONS + 3 },
          () => ctx.request(methods.agent.session.new, { cwd: dir, mcpServers: [] }),
        ),
      );
      const ids = opened.flatMap((result) =>
        result.status === "fulfilled" ? [result.value.sessionId] : []
      );
      equal(ids.length, MAX_OPEN_SESSIONS);
      for (const result of opened) {
        if (result.status === "fulfilled") continue;
        const error = result.reason;
        ok(error instanceof RequestError, String(error));
        equal(error.code, -32600);
        match(error.message, /32 are open on this connection; close one with session\/close first/);
      }
      await ctx.request(methods.agent.session.close, { sessionId: ids[0] });
      // A closed session takes no prompt.
      const prompted = await ctx.request(methods.agent.session.prompt, {
        sessionId: ids[0],
        prompt: [{ type: "text", text: "hello" }],
      }).then(() => undefined, (error: unknown) => error);
      ok(prompted instanceof RequestError);
      equal(prompted.code, -32002);
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      const { stopReason } = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "hello" }],
      });
      equal(stopReason, "end_turn");
    });
  });
});

Deno.test("tern acp runs no MCP server session/new names and takes no session/set_mode", async () => {
  await withBench([{ text: "answer" }], async ({ connect, dir }) => {
    const ran = join(dir, "..", `mcp-ran-${crypto.randomUUID()}`);
    await connect(async (ctx) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        // A program the editor relays: tern's own MCP servers come from the person's config.
        mcpServers: [{
          name: "relayed",
          command: "/bin/sh",
          args: ["-c", `touch '${ran}'`],
          env: [],
        }],
      });
      const moded = await ctx.request(methods.agent.session.setMode, {
        sessionId,
        modeId: "bypass",
      }).then(() => undefined, (error: unknown) => error);
      ok(moded instanceof RequestError, "session/set_mode was taken");
      equal(moded.code, -32601);
      const { stopReason } = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "hello" }],
      });
      equal(stopReason, "end_turn");
    });
    equal(await Deno.stat(ran).then(() => true, () => false), false, "the relayed server ran");
  });
});
