/**
 * `tern acp` against an editor that sends a prompt with nothing in it: it is refused as invalid
 * params, as `tern run ""` is, before any model call; an empty message never enters the session
 * (a provider that refuses empty text would refuse every later turn of it). Driven by the ACP
 * SDK's own client.
 */
import { type ContentBlock, methods, RequestError } from "@agentclientprotocol/sdk";
import { equal, match, ok } from "node:assert/strict";
import { withBench } from "../support/acp_bench.ts";

Deno.test("tern acp refuses an empty prompt before any model call, and the session goes on", async () => {
  await withBench([{ text: "answer" }], async ({ connect, dir, requests }) => {
    await connect(async (ctx) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      const empty: ContentBlock[][] = [
        [],
        [{ type: "text", text: "" }],
        [{ type: "text", text: " \n\t " }, { type: "text", text: "" }],
      ];
      for (const prompt of empty) {
        const refused = await ctx.request(methods.agent.session.prompt, { sessionId, prompt })
          .then(() => undefined, (error: unknown) => error);
        ok(refused instanceof RequestError, `accepted: ${JSON.stringify(prompt)}`);
        equal(refused.code, -32602);
        match(refused.message, /The prompt is empty/);
      }
      equal(requests.length, 0, "a model call for an empty prompt");
      const { stopReason } = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "hello" }],
      });
      equal(stopReason, "end_turn");
      equal(requests.length, 1);
      const users = (requests[0].body.messages as Array<{ role: string; content: unknown }>)
        .filter((message) => message.role === "user");
      equal(users.length, 1, JSON.stringify(users));
    });
  });
});
