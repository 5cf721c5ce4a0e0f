/**
 * `tern acp` against a model that names a file it may not read: a call's location is where an
 * editor that follows the agent opens a file, so a path the read guard refuses (a home secret,
 * a workspace link leading to one) gets none, live or replayed by `session/load`. Driven by the
 * ACP SDK's own client.
 */
import { methods } from "@agentclientprotocol/sdk";
import { deepEqual } from "node:assert/strict";
import { join } from "node:path";
import { updatesOf, withBench } from "../support/acp_bench.ts";

const read = (id: string, path: string) => ({
  toolCalls: [{ id, name: "read", arguments: JSON.stringify({ path }) }],
});

/** Each `tool_call` update's title and locations, in order. */
function shown(updates: ReturnType<typeof updatesOf>) {
  return updates.map((update) =>
    update.sessionUpdate === "tool_call" ? update.locations?.map(({ path }) => path) ?? [] : []
  );
}

Deno.test("tern acp gives no location for a file the model may not read, live or replayed", async () => {
  let secret = "";
  await withBench((_request, index) => {
    if (index === 0) return read("r1", secret);
    if (index === 1) return read("r2", "notes.md");
    if (index === 2) return read("r3", "ok.txt");
    return { text: "done" };
  }, async ({ connect, dir, home }) => {
    secret = join(home, ".ssh", "id_rsa");
    await Deno.mkdir(join(home, ".ssh"));
    await Deno.writeTextFile(secret, "PRIVATE KEY\n");
    await Deno.symlink(secret, join(dir, "notes.md"));
    await Deno.writeTextFile(join(dir, "ok.txt"), "fine\n");
    const expected = [[], [], [join(dir, "ok.txt")]];
    let sessionId = "";
    await connect(async (ctx, editor) => {
      ({ sessionId } = await ctx.request(methods.agent.session.new, { cwd: dir, mcpServers: [] }));
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "read them" }],
      });
      deepEqual(shown(updatesOf(editor, "tool_call")), expected);
    });
    await connect(async (ctx, editor) => {
      await ctx.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
      deepEqual(shown(updatesOf(editor, "tool_call")), expected);
    });
  }, { args: ["--mode", "bypass"] });
});
