/**
 * `tern acp` reading a linked file through an editor that answers `fs/read_text_file` with no
 * text (a number, a list, null: the SDK does not check the answer): the file is left out, with
 * the reason in its place, never a list's items or `42` taken for the file's text. Driven by the
 * ACP SDK's own client.
 */
import { methods } from "@agentclientprotocol/sdk";
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { withBench } from "../support/acp_bench.ts";

Deno.test("tern acp attaches no file whose fs/read_text_file answer holds no text", async () => {
  const answers = [42, null, ["stolen"], { text: "stolen" }];
  await withBench(answers.map(() => ({ text: "ok" })), async ({ connect, dir, requests }) => {
    await Deno.writeTextFile(join(dir, "a.txt"), "on disk\n");
    await connect(async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      for (const [index, answer] of answers.entries()) {
        editor.read = () => answer as never;
        const { stopReason } = await ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [
            { type: "text", text: "look" },
            { type: "resource_link", uri: `file://${join(dir, "a.txt")}`, name: "a.txt" },
          ],
        });
        equal(stopReason, "end_turn");
        const messages = requests[index].body.messages as Array<{ content: string }>;
        const sent = messages.at(-1)!.content;
        ok(!sent.includes("Attached file:"), sent);
        ok(!sent.includes("stolen") && !sent.includes("REDACTED"), sent);
        ok(sent.includes("Cannot read a.txt") && sent.includes("holds no text"), sent);
      }
    });
  });
});
