/** A sandboxed MCP server runs under the rlimits of a sandboxed command (bubblewrap, for real). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openMcp } from "../../src/harness/mcp_setup.ts";
import { DEFAULT_LIMITS } from "../../src/sandbox/limits.ts";
import { trustServers } from "../../src/mcp/trust.ts";
import { bwrapTest } from "../sandbox/_bwrap_helpers.ts";

/**
 * The soft and hard values of the limit `name` in `/proc/<pid>/limits` (read by `cat`: the test
 * run's permissions do not reach another process's `/proc` files).
 */
async function limitOf(pid: string, name: string): Promise<string[]> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/limits`] }).output();
  const line = new TextDecoder().decode(out.stdout).split("\n")
    .find((row) => row.startsWith(name));
  assert.ok(line !== undefined, `no "${name}" in the limits of ${pid}`);
  return line.slice(name.length).trim().split(/\s+/).slice(0, 2);
}

bwrapTest(
  "a project MCP server in bubblewrap gets a command's process, memory and file limits",
  async () => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_mcp_limits_" }));
    const ternHome = join(root, "home", ".tern");
    const ws = join(root, "ws");
    await Deno.mkdir(ternHome, { recursive: true });
    await Deno.mkdir(ws);
    Deno.copyFileSync(
      new URL("../fixtures/mcp/fault_server.ts", import.meta.url),
      join(ws, "srv.ts"),
    );
    const tag = `tag-${crypto.randomUUID()}`;
    Deno.writeTextFileSync(
      join(ws, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          srv: {
            command: Deno.execPath(),
            args: ["run", "-A", "--no-config", "./srv.ts", "ok", tag],
          },
        },
      }),
    );
    const open = () => openMcp({ ternHome, workspace: ws, env: () => undefined, warn: () => {} });
    const { manager } = await open().then(async (first) => {
      await trustServers(ternHome, ws, first.servers);
      return await open();
    });
    assert.ok(manager !== undefined);
    try {
      const status = await manager.startServer("srv");
      assert.equal(status.state, "READY", status.error);
      const pgrep = await new Deno.Command("pgrep", {
        args: ["-f", `^${Deno.execPath()} run .*srv.ts ok ${tag}`],
      }).output();
      // The server itself, not bubblewrap or its launcher (their command lines hold it too).
      const pids = new TextDecoder().decode(pgrep.stdout).trim().split("\n").filter((p) => p);
      assert.ok(pids.length > 0, "the server's process was not found");
      for (const pid of pids) {
        const processes = String(DEFAULT_LIMITS.processes);
        assert.deepEqual(await limitOf(pid, "Max processes"), [processes, processes]);
        const bytes = String(DEFAULT_LIMITS.fileSizeMb * 1024 * 1024);
        assert.deepEqual(await limitOf(pid, "Max file size"), [bytes, bytes]);
        const data = String(DEFAULT_LIMITS.memoryMb * 1024 * 1024);
        assert.deepEqual(await limitOf(pid, "Max data size"), [data, data]);
        // A server lives as long as the session: its CPU time is not capped like a command's.
        assert.ok(Number((await limitOf(pid, "Max cpu time"))[0]) > DEFAULT_LIMITS.cpuSeconds);
      }
    } finally {
      await manager.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);
