/**
 * `tern acp` while the editor does not read (suspended, busy): a command's output, which the
 * editor is never sent as it comes, must not pile up in tern's memory waiting for the pipe.
 */
import { methods } from "@agentclientprotocol/sdk";
import { equal, ok } from "node:assert/strict";
import { withBench } from "../support/acp_bench.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { peakMiB } from "../support/peak_memory.ts";

testWith(
  [bwrapNeed],
  "tern acp keeps no command output for an editor that stopped reading",
  async () => {
    // 200 MB of output from a command nobody is asked about; the answer's text fills the pipe.
    const command = "head -c 200000000 /dev/zero | tr '\\0' a";
    await withBench([
      {
        text: "x".repeat(300_000),
        toolCalls: [{ id: "b0", name: "bash", arguments: JSON.stringify({ command }) }],
      },
      { text: "done" },
    ], async ({ connect, dir, requested }) => {
      await connect(async (ctx, editor) => {
        const { sessionId } = await ctx.request(methods.agent.session.new, {
          cwd: dir,
          mcpServers: [],
        });
        editor.pauseReading();
        const answer = ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "count" }],
        });
        // The second request carries the command's result: its output has all passed by.
        await requested(2);
        const peak = await peakMiB(editor.pid);
        editor.resumeReading();
        equal((await answer).stopReason, "end_turn");
        ok(peak < 250, `tern's largest size was ${peak.toFixed(0)} MiB`);
      });
    }, { args: ["--mode", "bypass"] });
  },
);
