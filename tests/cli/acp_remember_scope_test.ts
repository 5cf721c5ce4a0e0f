/**
 * `tern acp`: the "allow for this session" option names what it allows (a command's prefix, not
 * the one call shown), in its name and in the dialog's text; a second, different call inside
 * that scope then runs unasked: what the option said is what the person agreed to. Driven by the
 * ACP SDK's own client, as an editor would.
 */
import type { RequestPermissionRequest } from "@agentclientprotocol/sdk";
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { promptOnce, type Script, withBench } from "../support/acp_bench.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const bash = (id: string, command: string) => ({
  toolCalls: [{ id, name: "bash", arguments: JSON.stringify({ command }) }],
});

/** What an ACP editor was asked during one prompt of `script`, answering each with `optionId`. */
async function dialogs(
  script: Script,
  optionId: string,
  check: (asked: RequestPermissionRequest[], dir: string) => void | Promise<void>,
): Promise<void> {
  await withBench(script, async ({ connect, dir }) => {
    let asked: RequestPermissionRequest[] = [];
    await connect(async (ctx, editor) => {
      editor.answer = () => ({ outcome: "selected", optionId });
      equal((await promptOnce(ctx, dir, "touch them")).stopReason, "end_turn");
      asked = editor.asked;
    });
    await check(asked, dir);
  }, { args: ["--mode", "ask"] });
}

testWith(
  [bwrapNeed],
  "tern acp's 'allow for this session' option names what it allows, and a covered call runs unasked",
  () =>
    dialogs(
      (_request, index) => {
        if (index === 0) return bash("b0", "touch one.txt");
        if (index === 1) return bash("b1", "touch two.txt");
        return { text: "done" };
      },
      "allow_session",
      async (asked, dir) => {
        // One dialog, for `touch one.txt`: its session option says it covers every `touch …`.
        equal(asked.length, 1);
        deepEqual(asked[0].options.map((option) => [option.optionId, option.name]), [
          ["allow_once", "Allow once"],
          ["allow_session", 'Allow any "touch …" command for this session'],
          ["reject", "Deny"],
        ]);
        match(
          JSON.stringify(asked[0].toolCall.content),
          /\\"Allow for this session\\" allows any \\"touch …\\" command, not only this call/,
        );
        ok(!JSON.stringify(asked[0].toolCall.content).includes("hidden as a key"));
        // `touch two.txt` is inside that scope: it ran without a second dialog.
        ok(await Deno.stat(join(dir, "one.txt")).then(() => true, () => false));
        ok(await Deno.stat(join(dir, "two.txt")).then(() => true, () => false));
      },
    ),
);

testWith(
  [bwrapNeed],
  "tern acp's question says first when part of the call is hidden as a key",
  () =>
    dialogs(
      (_request, index) => {
        if (index === 0) return bash("b0", "echo token=abc123|touch$IFS/tmp/z30-pwned$IFS~/x");
        return { text: "done" };
      },
      "reject",
      (asked) => {
        equal(asked.length, 1);
        const [question] = asked[0].toolCall.content ?? [];
        const text = question?.type === "content" && question.content.type === "text"
          ? question.content.text
          : "";
        match(text, /^Part of this call is hidden as a key/);
        ok(!String(asked[0].toolCall.title).includes("touch"), asked[0].toolCall.title ?? "");
      },
    ),
);
