/**
 * `tern acp` against an editor that leaves at a bad moment: a session it asked for just before
 * closing the connection is closed with the rest (its MCP servers stopped), so tern exits on its
 * own instead of running on with nobody to talk to. Driven by the ACP SDK's own client.
 */
import { methods } from "@agentclientprotocol/sdk";
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { withBench } from "../support/acp_bench.ts";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";

/** Whether a process whose command line names `text` runs. */
async function running(text: string): Promise<boolean> {
  const { code } = await new Deno.Command("pgrep", { args: ["-f", text], stdout: "null" })
    .output();
  return code === 0;
}

Deno.test("tern acp closes a session the editor asked for just before it hung up, and exits", async () => {
  await withBench([{ text: "unused" }], async ({ connect, dir, home }) => {
    // A user MCP server: a session holds it open until the session is closed.
    const server = faultServerCommand("ok", { workspace: dir });
    const env = {
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME")!, ".cache/deno"),
    };
    await Deno.writeTextFile(
      join(home, "mcp.json"),
      JSON.stringify({ servers: { f: { ...server, env } } }),
    );
    let killed = false;
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    try {
      await connect(async (ctx, editor) => {
        // tern is given 20 s to exit once the editor is gone; then the test ends it.
        watchdog = setTimeout(() => {
          killed = true;
          Deno.kill(editor.pid, "SIGKILL");
        }, 20_000);
        // session/new goes out, and the editor closes the connection before the answer.
        ctx.request(methods.agent.session.new, { cwd: dir, mcpServers: [] }).catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, 100));
      });
    } catch (error) {
      if (!killed) throw error;
    } finally {
      clearTimeout(watchdog);
    }
    equal(killed, false, "tern acp did not exit after the editor closed the connection");
    // The session's MCP server went with it.
    for (let wait = 0; wait < 300 && await running(join(dir, "fault_server.ts")); wait++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    equal(
      await running(join(dir, "fault_server.ts")),
      false,
      "the session's MCP server still runs",
    );
  });
});
