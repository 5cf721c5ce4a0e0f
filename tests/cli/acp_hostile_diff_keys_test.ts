/**
 * `tern acp`: a key in the person's file (one the model never wrote) reaches the editor masked
 * in the diff of a call that edits it, in the tool call's card and in the permission dialog,
 * as everything else tern sends is masked.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { updatesOf, withBench } from "../support/acp_bench.ts";

const KEY = "sk-proj-SECRETabcdefghijklmnop1234567890";

Deno.test("tern acp masks a key the edited file holds in the diffs it sends", async () => {
  const edit = {
    toolCalls: [{
      id: "e1",
      name: "edit",
      arguments: JSON.stringify({
        path: "settings.txt",
        old_string: "name=old",
        new_string: "name=new",
      }),
    }],
  };
  await withBench([edit, { text: "edited" }], async ({ connect, dir }) => {
    await Deno.writeTextFile(join(dir, "settings.txt"), `OPENAI_KEY=${KEY}\nname=old\n`);
    await connect(async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "rename" }],
      });
      equal(editor.asked.length, 1);
      const sent = JSON.stringify([editor.updates, editor.asked]);
      ok(!sent.includes(KEY), "the key is never sent");
      const diffs = [
        ...editor.asked.flatMap((asked) => asked.toolCall.content ?? []),
        ...updatesOf(editor, "tool_call").flatMap((update) =>
          update.sessionUpdate === "tool_call" ? update.content ?? [] : []
        ),
      ].filter((content) => content.type === "diff");
      equal(diffs.length, 2, sent);
      for (const diff of diffs) {
        if (diff.type !== "diff") continue;
        ok(diff.oldText?.includes("name=old") && diff.oldText.includes("[REDACTED"), diff.oldText!);
        ok(diff.newText.includes("name=new") && diff.newText.includes("[REDACTED"), diff.newText);
      }
    });
    equal(await Deno.readTextFile(join(dir, "settings.txt")), `OPENAI_KEY=${KEY}\nname=new\n`);
  }, { args: ["--mode", "ask"] });
});
