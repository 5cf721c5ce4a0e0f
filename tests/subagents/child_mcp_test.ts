/** A subagent starts no MCP server: its tools are built-ins only (spawn_agent names no MCP tool). */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, firstUser } from "./_helpers.ts";

/** How many processes run the MCP server script at `script` (the parent's, a child's). */
function serversRunning(script: string): number {
  const out = new Deno.Command("pgrep", { args: ["-c", "-f", script] }).outputSync();
  return Number(new TextDecoder().decode(out.stdout).trim() || "0");
}

Deno.test("tern child starts none of the MCP servers its parent runs", async () => {
  const ws = await tempWorkspace();
  const atChild: number[] = [];
  const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
  try {
    // A copy of the server script under a path of this test only: pgrep counts its servers.
    const fault = faultServerCommand("ok", { workspace: ws.dir });
    const script = join(ws.dir, "fault_server.ts");
    await Deno.writeTextFile(join(ws.home, "mcp.json"), JSON.stringify({ servers: { fault } }));
    const server = await startScriptedServer((request) => {
      if (isChild(request)) return { text: "child done" };
      const text = allText(request);
      if (!text.includes("Started subagent")) {
        return call("spawn_agent", { task_name: "look", message: "CHILD look" }, "s1");
      }
      if (!text.includes("child done")) return call("wait_agent", {}, "w1");
      return { text: "parent done" };
    }, {
      chunkDelayMs: 0,
      beforeReply: (request) => {
        // The parent's server runs (it started before the parent's first request); a child
        // that started its own would have it running before its first request too.
        if (isChild(request)) atChild.push(serversRunning(script));
        return Promise.resolve();
      },
    });
    try {
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
      const run = await runTern(
        ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"],
        { cwd: ws.dir, env },
      );
      equal(run.code, 0, run.stderr);
      equal(atChild.length, 1);
      equal(atChild[0], 1, "only the parent's MCP server runs while the child asks its model");
    } finally {
      await server.close();
    }
  } finally {
    await ws.cleanup();
  }
});
