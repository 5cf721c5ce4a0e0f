/**
 * `tern acp`: the diff of a writing call, in the permission dialog and the call's card, shows what
 * an editor would obey or hide (a bidi override, a lone carriage return, a zero-width space) made
 * visible, as the terminal's diff does: the change the person approves reads as what is written
 * (Trojan Source: a bidi override makes code read otherwise in an editor that draws it as it is).
 * Spaces, tabs and line breaks stay as they are.
 */
import { methods } from "@agentclientprotocol/sdk";
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { withBench, writeCall } from "../support/acp_bench.ts";

const WRITTEN =
  "\tlet ok = 1;\n    const a = 'x\u202e\u2066// y\u2069\u2066';\nb\rc\u200bd\r\nend\n";

Deno.test("tern acp shows a diff's hidden characters made visible, its layout kept", async () => {
  await withBench([writeCall("w1", "trojan.ts", WRITTEN), { text: "written" }], async (bench) => {
    await bench.connect(async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: bench.dir,
        mcpServers: [],
      });
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "write it" }],
      });
      const diffs = [
        ...editor.asked.flatMap((asked) => asked.toolCall.content ?? []),
        ...editor.updates.flatMap(({ update }) =>
          update.sessionUpdate === "tool_call" ? update.content ?? [] : []
        ),
      ].flatMap((content) => content.type === "diff" ? [content.newText] : []);
      equal(diffs.length, 2, JSON.stringify(editor.updates));
      for (const shown of diffs) {
        equal(
          shown,
          "\tlet ok = 1;\n    const a = 'x⟨U+202E⟩⟨U+2066⟩// y⟨U+2069⟩⟨U+2066⟩';\nb␍c⟨U+200B⟩d\r\nend\n",
        );
      }
    });
    // What is written is the model's text, as it was.
    equal(await Deno.readTextFile(join(bench.dir, "trojan.ts")), WRITTEN);
  }, { args: ["--mode", "ask"] });
});
