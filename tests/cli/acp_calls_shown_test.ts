/**
 * `tern acp`: what the editor is shown of a call and its permission dialog. A key the model
 * writes is masked in the dialog's text; a dialog names the call that asks; titles show controls
 * and bidi characters instead of passing them on, and never take a key the tool does not declare;
 * a cancel that comes while the prompt's linked file is read stops the prompt before any model
 * call. Driven by the ACP SDK's own client, as an editor would.
 */
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { agentText, promptOnce, updatesOf, withBench, writeCall } from "../support/acp_bench.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const KEY = "sk-test-SECRETKEY1234567890";

function call(id: string, name: string, args: Record<string, unknown>): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

function toolCalls(updates: SessionUpdate[]) {
  return updates.flatMap((update) => update.sessionUpdate === "tool_call" ? [update] : []);
}

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

testWith(
  [bwrapNeed],
  "tern acp masks a key the model writes in the permission dialog's reason",
  async () => {
    await withBench([
      call("b0", "bash", { command: `echo hi > /tmp/${KEY}.txt` }),
      { text: "denied" },
    ], async ({ connect, dir }) => {
      await connect(async (ctx, editor) => {
        editor.answer = () => ({ outcome: "selected", optionId: "reject" });
        await promptOnce(ctx, dir, "say hi");
        equal(editor.asked.length, 1);
        const shown = JSON.stringify([editor.asked, editor.updates]);
        ok(!shown.includes("SECRETKEY1234567890"), shown);
        // The policy's reason quotes the path it writes: there too the key is masked.
        match(
          JSON.stringify(editor.asked[0].toolCall.content),
          /redirection \\">\\" writes \\"\/tmp\/\[REDACTED\]\.txt\\"/,
        );
      });
    }, { args: ["--mode", "ask"], env: { TERN_API_KEY: KEY } });
  },
);

Deno.test("tern acp's permission dialog names the call that asks, not one the reviewer allowed before", async () => {
  const reviewer = (request: ModelRequest) =>
    request.messages[0]?.role === "system" &&
    request.messages[0].content.startsWith("You are a security reviewer");
  await withBench((request: ModelRequest) => {
    if (reviewer(request)) {
      const said = request.messages.at(-1)!.content;
      // The first write is allowed; the reviewer's answer to the second is no answer at all,
      // so the person decides it.
      return {
        text: said.includes('"arguments":{"path":"notes.txt","content":"B"}')
          ? "not a decision"
          : '{"decision":"allow","reason":"the person asked for notes"}',
      };
    }
    const results = request.messages.filter((message) => message.role === "tool").length;
    if (results === 0) return writeCall("w1", "notes.txt", "A");
    if (results === 1) return writeCall("w2", "notes.txt", "B");
    return { text: "done" };
  }, async ({ connect, dir }) => {
    await connect(async (ctx, editor) => {
      const response = await promptOnce(ctx, dir, "write notes twice");
      equal(response.stopReason, "end_turn");
      equal(editor.asked.length, 1);
      equal(editor.asked[0].toolCall.toolCallId, "w2");
      match(JSON.stringify(editor.asked[0].toolCall.content), /"newText":"B"/);
      equal(await Deno.readTextFile(join(dir, "notes.txt")), "B");
    });
  }, { args: ["--mode", "auto"] });
});

testWith(
  [bwrapNeed],
  "tern acp shows controls and bidi characters in titles instead of passing them on",
  async () => {
    const command = "echo hello > \u202eexe.txt\u202c";
    const unknown = "re\u001b[0mad\u202e";
    await withBench([
      call("b0", "bash", { command }),
      call("u0", unknown, { path: "a.txt" }),
      { text: "done" },
    ], async ({ connect, dir }) => {
      await connect(async (ctx, editor) => {
        editor.answer = () => ({ outcome: "selected", optionId: "reject" });
        await promptOnce(ctx, dir, "make a file");
        equal(editor.asked.length, 1);
        const dialog = editor.asked[0].toolCall;
        equal(dialog.title, "bash: echo hello > ⟨U+202E⟩exe.txt⟨U+202C⟩");
        // The question quotes the path too: shown the same way. What runs is passed on exactly,
        // as data, and only there.
        match(JSON.stringify(dialog.content), /⟨U\+202E⟩exe\.txt⟨U\+202C⟩/);
        ok(!JSON.stringify({ ...dialog, rawInput: undefined }).includes("\u202e"));
        deepEqual(dialog.rawInput, { command });
        const titles = toolCalls(updatesOf(editor, "tool_call")).map((update) => update.title);
        deepEqual(titles, ["bash: echo hello > ⟨U+202E⟩exe.txt⟨U+202C⟩", "re␛[0mad⟨U+202E⟩"]);
      });
    }, { args: ["--mode", "ask"] });
  },
);

Deno.test("tern acp titles a call by the arguments its tool declares, not an extra one", async () => {
  await withBench([
    call("w0", "write", { path: "evil.sh", content: "rm -rf ~\n", command: "ls -la" }),
    { text: "done" },
  ], async ({ connect, dir }) => {
    await connect(async (ctx, editor) => {
      await promptOnce(ctx, dir, "write it");
      const [shown] = toolCalls(updatesOf(editor, "tool_call"));
      equal(shown.title, "write: evil.sh");
      equal(shown.kind, "edit");
      equal((shown.rawInput as { command: string }).command, "ls -la");
      equal(await exists(join(dir, "evil.sh")), false);
    });
  }, { args: ["--mode", "ask"] });
});

Deno.test("tern acp shows an edit too large for a diff as a line saying so, and goes on", async () => {
  await withBench([
    call("e0", "edit", {
      path: "big.txt",
      old_string: "a",
      new_string: "b".repeat(100_000),
      replace_all: true,
    }),
    { text: "first done" },
    { text: "second answer" },
  ], async ({ connect, dir }) => {
    await Deno.writeTextFile(join(dir, "big.txt"), "a".repeat(10_000));
    await connect(async (ctx, editor) => {
      editor.answer = () => ({ outcome: "selected", optionId: "reject" });
      await promptOnce(ctx, dir, "one");
      const [shown] = toolCalls(updatesOf(editor, "tool_call"));
      match(JSON.stringify(shown.content), /No diff: the file would be 1,000,000,000 characters/);
      // The connection and the session are still there.
      await promptOnce(ctx, dir, "two");
      match(agentText(editor), /second answer/);
      equal(await Deno.readTextFile(join(dir, "big.txt")), "a".repeat(10_000));
    });
  }, { args: ["--mode", "ask"] });
});

Deno.test("tern acp cancels a prompt while the editor reads its linked file: no model is called", async () => {
  await withBench((request: ModelRequest) => {
    const said = request.messages.at(-1)!.content;
    return said.includes("again") ? { text: "fine" } : call("b0", "bash", {
      command: "touch ran_after_cancel",
    });
  }, async ({ connect, dir, requests }) => {
    await connect(async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      // As an editor whose person cancels while tern waits for the buffer: cancel, then answer.
      editor.read = async () => {
        await ctx.notify(methods.agent.session.cancel, { sessionId });
        return "the buffer\n";
      };
      const response = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: "text", text: "look" },
          { type: "resource_link", uri: `file://${join(dir, "a.txt")}`, name: "a.txt" },
        ],
      });
      equal(response.stopReason, "cancelled");
      equal(requests.length, 0);
      equal(await exists(join(dir, "ran_after_cancel")), false);
      // The session goes on: the next prompt runs.
      const next = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "again" }],
      });
      equal(next.stopReason, "end_turn");
      equal(requests.length, 1);
    });
  }, { args: ["--mode", "bypass"] });
});
