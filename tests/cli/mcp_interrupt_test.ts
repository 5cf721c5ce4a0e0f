/**
 * Ctrl-C during `tern mcp list`, `tools` and `call` while a server is still starting: tern stops
 * the server and exits 130 at once, rather than waiting for the server's start-up timeout.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";
import { tempWorkspace, ternCommand } from "../support/tern_process.ts";
import { runningWith } from "../harness/_processes.ts";

async function waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (
  const args of [["mcp", "list"], ["mcp", "tools", "stuck"], ["mcp", "call", "stuck", "echo"]]
) {
  Deno.test(`tern ${args.join(" ")}: Ctrl-C while a server starts stops it and exits 130`, async () => {
    const ws = await tempWorkspace();
    try {
      // A server that never answers initialize, with a start-up timeout of ten minutes.
      const server = faultServerCommand("silent", { workspace: ws.dir });
      const script = join(ws.dir, "fault_server.ts");
      await Deno.writeTextFile(
        join(ws.home, "mcp.json"),
        JSON.stringify({ servers: { stuck: { ...server, startupTimeoutMs: 600_000 } } }),
      );
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test-mcp-interrupt-01" };
      const guard = AbortSignal.timeout(60_000);
      const child = ternCommand(args, { cwd: ws.dir, env, signal: guard }, "null").spawn();
      const output = child.output();
      await waitFor(() => runningWith(script), "the server to start");
      child.kill("SIGINT");
      const out = await output;
      const stderr = new TextDecoder().decode(out.stderr);
      ok(!guard.aborted, "tern waited for the server's start-up timeout");
      equal(out.code, 130, stderr);
      match(stderr, /interrupted/);
      await waitFor(async () => !(await runningWith(script)), "the server to be stopped");
    } finally {
      await ws.cleanup();
    }
  });
}
