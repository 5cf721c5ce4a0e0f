/**
 * `tern rpc` and `tern acp` stopped by SIGTERM or SIGHUP mid-command (how editors and
 * supervisors stop an agent) close in order, as `tern run` does: the command ends, the
 * sandbox's tmp folder and the workspace's mount points go, and the exit code names the signal.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { type LineProcess, spawnLineProcess } from "../support/line_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";
import { processesMatching } from "../support/tmux.ts";

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

async function tmpFolders(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir)))
    .map((entry) => entry.name)
    .filter((name) => name.startsWith("tern-tmp-"));
}

/** Starts `tern <front>`, has it run a long command, sends `signal`, checks what is left. */
async function stoppedMidCommand(
  front: "rpc" | "acp",
  signal: "SIGTERM" | "SIGHUP",
  start: (tern: LineProcess, dir: string) => Promise<void>,
): Promise<void> {
  const mark = `tern_stop_${crypto.randomUUID().slice(0, 8)}`;
  const command = `sleep 600; : ${mark}`;
  const server = await startScriptedServer([
    { toolCalls: [{ id: "c0", name: "bash", arguments: JSON.stringify({ command }) }] },
    { text: "stopped" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-signal-tmp-" }));
  const tern = spawnLineProcess(
    [front, "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"],
    {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test", TMPDIR: tmp },
    },
  );
  try {
    await start(tern, ws.dir);
    // The command runs: its marker shows among the processes.
    for (let i = 0; (await processesMatching(mark)).length === 0; i++) {
      ok(i < 600, "the command did not start within a minute");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const before = await tmpFolders(tmp);
    equal(before.length, 1);
    tern.signal(signal);
    const { code, stderr } = await tern.finish();
    equal(code, signal === "SIGTERM" ? 143 : 129, stderr);
    equal((await processesMatching(mark)).length, 0);
    equal(
      (await tmpFolders(tmp)).length,
      0,
      `the sandbox's tmp folder is left: ${before} ${await tmpFolders(tmp)} ${stderr}`,
    );
    // The warm shell's mount points in the workspace went with the sandbox.
    ok(!await exists(join(ws.dir, ".tern")), "the .tern mount point is left");
    ok(!await exists(join(ws.dir, ".git")), "the .git mount point is left");
  } finally {
    await tern.kill();
    await server.close();
    await ws.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
}

testWith(
  [bwrapNeed],
  "tern rpc stopped by SIGTERM mid-command closes in order",
  () =>
    stoppedMidCommand("rpc", "SIGTERM", async (rpc) => {
      await rpc.waitFor((line) => line.type === "ready");
      await rpc.send({ id: 1, type: "prompt", message: "wait" });
    }),
);

testWith(
  [bwrapNeed],
  "tern acp stopped by SIGHUP mid-command closes in order",
  () =>
    stoppedMidCommand("acp", "SIGHUP", async (acp, dir) => {
      await acp.send({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: 1, clientCapabilities: {} },
      });
      await acp.waitFor((line) => line.id === 0);
      await acp.send({
        jsonrpc: "2.0",
        id: 1,
        method: "session/new",
        params: { cwd: dir, mcpServers: [] },
      });
      const created = await acp.waitFor((line) => line.id === 1);
      const { sessionId } = created.result as { sessionId: string };
      await acp.send({
        jsonrpc: "2.0",
        id: 2,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "wait" }] },
      });
    }),
);
