/**
 * `tern acp` says what it does on the person's behalf and why it stops: approvals a loaded
 * session restores are told to the editor, and a message over the SDK's size limit ends tern
 * with an error, not a silent exit 0.
 */
import { methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { equal, match, ok } from "node:assert/strict";
import type { ModelRequest } from "../../src/llm/types.ts";
import { agentText, withBench, writeCall } from "../support/acp_bench.ts";
import { spawnLineProcess } from "../support/line_process.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern acp tells the editor when a loaded session restores 'allow for this session' answers", async () => {
  await withBench((request: ModelRequest, index: number) => {
    const last = request.messages.at(-1);
    return last?.role === "user" ? writeCall(`w${index}`, `f${index}.txt`, "x\n") : { text: "ok" };
  }, async ({ connect, dir }) => {
    let sessionId = "";
    await connect(async (ctx, editor) => {
      sessionId = (await ctx.request(methods.agent.session.new, { cwd: dir, mcpServers: [] }))
        .sessionId;
      editor.answer = () => ({ outcome: "selected", optionId: "allow_session" });
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "write one" }],
      });
      equal(editor.asked.length, 1);
    });
    await connect(async (ctx, editor) => {
      editor.answer = () => ({ outcome: "selected", optionId: "reject" });
      await ctx.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
      const replayed = agentText(editor);
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "write another" }],
      });
      // The restored answer allowed the write unasked, and the editor was told so.
      equal(editor.asked.length, 0);
      match(
        agentText(editor).slice(replayed.length),
        /\[tern: allowed by policy: Restored from the session: your "allow for this session" answers \(tool:write\)\]/,
      );
    });
  }, { args: ["--mode", "ask"] });
});

Deno.test("tern acp exits with an error naming the limit when the editor sends a message over 32 MiB", async () => {
  const { promise: asked, resolve } = Promise.withResolvers<void>();
  const server = await startScriptedServer([{ fault: "hang" }], {
    chunkDelayMs: 0,
    onRequest: () => resolve(),
  });
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
  const tern = spawnLineProcess(["acp", "--base-url", server.baseUrl, "-m", "scripted"], {
    cwd: ws.dir,
    env,
  });
  try {
    await tern.send({
      jsonrpc: "2.0",
      id: 1,
      method: methods.agent.initialize,
      params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} },
    });
    await tern.waitFor((line) => line.id === 1);
    await tern.send({
      jsonrpc: "2.0",
      id: 2,
      method: methods.agent.session.new,
      params: { cwd: ws.dir, mcpServers: [] },
    });
    const created = await tern.waitFor((line) => line.id === 2);
    const { sessionId } = (created.result ?? {}) as { sessionId?: string };
    ok(sessionId !== undefined, JSON.stringify(created));
    await tern.send({
      jsonrpc: "2.0",
      id: 3,
      method: methods.agent.session.prompt,
      params: { sessionId, prompt: [{ type: "text", text: "go" }] },
    });
    // A turn runs (its model call hangs) when the oversized message comes.
    await asked;
    // tern stops reading at the limit; the rest of the write fails when it exits.
    await tern.sendRaw(`"${"x".repeat(33 * 2 ** 20)}"\n`).catch(() => {});
    const { code, stderr } = await tern.finish();
    equal(code, 1, stderr);
    match(stderr, /larger than ACP's limit of 33554432 bytes \(32 MiB\)/);
    // The running turn was cancelled, not answered.
    ok(!tern.lines.some((line) => line.id === 3), JSON.stringify(tern.lines));
  } finally {
    await tern.kill();
    await server.close();
    await ws.cleanup();
  }
});
