/**
 * End-to-end: the RPC `rewind` preview masks the keys tern holds in the patch it sends, as
 * `tern sessions rewind` and `/rewind` do: a checkpoint's patch holds the files' content, and a
 * file may hold a key. `tern rpc` as a subprocess against the scripted server.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { spawnLineProcess } from "../support/line_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-live-rpc-rewind-7d1e9b3c5a2f4086";

testWith([bwrapNeed], "tern rpc rewind masks a key held in the patch it sends", async () => {
  const server = await startScriptedServer([
    {
      toolCalls: [{
        id: "w0",
        name: "write",
        arguments: JSON.stringify({ path: "config.txt", content: "api_key = from the env\n" }),
      }],
    },
    { text: "written" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  Deno.writeTextFileSync(join(ws.dir, "config.txt"), `api_key = ${KEY}\n`);
  const rpc = spawnLineProcess(
    ["rpc", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"],
    { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY } },
  );
  const responseTo = (id: number) =>
    rpc.waitFor((line) => line.type === "response" && line.id === id);
  try {
    await rpc.waitFor((line) => line.type === "ready");
    await rpc.send({ type: "prompt", id: 1, message: "write the config" });
    equal((await responseTo(1)).ok, true);
    await rpc.send({ type: "get_state", id: 2 });
    const { sessionPath } = (await responseTo(2)).data as { sessionPath: string };
    const user = Deno.readTextFileSync(sessionPath).trim().split("\n").map((line) =>
      JSON.parse(line)
    ).find((entry) => entry.type === "message" && entry.message?.role === "user");
    await rpc.send({ type: "rewind", id: 3, target: user.id });
    const plan = (await responseTo(3)).data as { patch: string };
    ok(plan.patch.includes("config.txt"), plan.patch);
    ok(!plan.patch.includes(KEY) && plan.patch.includes("REDACTED"), plan.patch);
    await rpc.send({ type: "rewind", id: 4, target: user.id, apply: true });
    const applied = (await responseTo(4)).data as { applied: boolean; patch: string };
    equal(applied.applied, true);
    ok(!applied.patch.includes(KEY), applied.patch);
    equal(Deno.readTextFileSync(join(ws.dir, "config.txt")), `api_key = ${KEY}\n`);
    await rpc.finish();
    ok(!rpc.lines.some((line) => JSON.stringify(line).includes(KEY)));
  } finally {
    await rpc.kill().catch(() => {});
    await server.close();
    await ws.cleanup();
  }
});
