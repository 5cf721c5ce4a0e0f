/**
 * `tern acp`: the "allow for this session" option names what it allows (a command's prefix, not
 * the one call shown), in its name and in the dialog's text; a second, different call inside
 * that scope then runs unasked: what the option said is what the person agreed to. Driven by the
 * ACP SDK's own client, as an editor would.
 */
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
} from "@agentclientprotocol/sdk";
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";

const bash = (id: string, command: string) => ({
  toolCalls: [{ id, name: "bash", arguments: JSON.stringify({ command }) }],
});

/** What an ACP editor was asked during one prompt of `script`, answering each with `optionId`. */
async function dialogs(
  script: (request: ModelRequest, index: number) => unknown,
  optionId: string,
  check: (asked: RequestPermissionRequest[], dir: string) => void | Promise<void>,
): Promise<void> {
  const server = await startScriptedServer(script as never, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
  const args = ["acp", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "ask"];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...declaredFlags(env, { cwd: ws.dir, args }), join(ROOT, "main.ts"), ...args],
    cwd: ws.dir,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const asked: RequestPermissionRequest[] = [];
  const app = client({ name: "test-editor" })
    .onNotification(methods.client.session.update, () => {})
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId } };
    });
  // The SDK's client never closes its output: the pipe is ended by hand, as an editor would.
  const toChild = new TransformStream<Uint8Array, Uint8Array>();
  const hangUp = new AbortController();
  const piped = toChild.readable.pipeTo(child.stdin, { signal: hangUp.signal }).catch(() => {});
  try {
    await app.connectWith(ndJsonStream(toChild.writable, child.stdout), async (ctx) => {
      await ctx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: false, writeTextFile: false },
          terminal: false,
        },
      });
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: ws.dir,
        mcpServers: [],
      });
      const response = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "touch them" }],
      });
      equal(response.stopReason, "end_turn");
    });
    await check(asked, ws.dir);
  } finally {
    hangUp.abort();
    await piped;
    const status = await child.status;
    equal(status.code, 0, await stderr);
    await server.close();
    await ws.cleanup();
  }
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
