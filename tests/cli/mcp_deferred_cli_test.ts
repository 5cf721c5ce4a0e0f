/**
 * Deferred MCP tools end to end: `tern run` against the scripted model with server-everything
 * configured and a context window its schemas exceed a tenth of.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { denoNpm, EVERYTHING, referenceServersNeed } from "../mcp/_servers.ts";
import { testWith } from "../support/needs.ts";

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

/** What a Deno-run server needs to start from the module cache (see mcp_cli_test.ts). */
function denoEnv(): Record<string, string> {
  const home = Deno.env.get("HOME")!;
  return { HOME: home, DENO_DIR: Deno.env.get("DENO_DIR") ?? join(home, ".cache", "deno") };
}

async function runWith(settings: Record<string, string>, replies: ScriptedReply[]) {
  const ws = await tempWorkspace();
  const server = await startScriptedServer(replies, { chunkDelayMs: 0 });
  try {
    const everything = { ...denoNpm(EVERYTHING, "stdio"), env: denoEnv() };
    await Deno.writeTextFile(
      join(ws.home, "mcp.json"),
      JSON.stringify({ servers: { everything } }),
    );
    const run = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", "echo it"],
      { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, ...settings } },
    );
    equal(run.code, 0, run.stderr);
    equal(JSON.parse(run.stdout).exitReason, "COMPLETED");
    return server.requests.map((request) => request.modelRequest);
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

testWith(
  [referenceServersNeed],
  "tern run: MCP schemas past a tenth of the window are loaded by tool_search, appended",
  async () => {
    const requests = await runWith({ TERN_CONTEXT_WINDOW: "8000" }, [
      call("tool_search", { query: "echo" }, "c1"),
      call("mcp__everything__echo", { message: "deferred" }, "c2"),
      { text: "done" },
    ]);
    const tools = (i: number) => requests[i].tools ?? [];
    const first = tools(0).map((tool) => tool.name);
    deepEqual(first.filter((name) => name.startsWith("mcp__")), []);
    ok(first.includes("read"), first.join(", "));
    // The system prompt names tool_search, not the deferred tools (the index does).
    const system = String(requests[0].messages[0].content);
    match(system, /Tools: [^\n]*\btool_search\b/);
    ok(!system.includes("mcp__everything__"), "the system prompt lists deferred tools");
    deepEqual(requests[2].messages[0], requests[0].messages[0]);
    const search = tools(0).find((tool) => tool.name === "tool_search")!;
    match(search.description, /^- mcp__everything__echo: /m);
    match(search.description, /^- mcp__everything__get-sum: /m);
    // The search's result told the model; the next request has the schema, appended.
    const result = requests[1].messages.find((m) => m.role === "tool")!;
    match(String(result.content), /Loaded 1 tool\(s\).*\n- mcp__everything__echo/);
    deepEqual(tools(1).slice(0, tools(0).length), tools(0));
    deepEqual(tools(1).slice(tools(0).length).map((tool) => tool.name), [
      "mcp__everything__echo",
    ]);
    deepEqual(tools(2), tools(1));
    const echoed = requests[2].messages.filter((m) => m.role === "tool")[1];
    match(String(echoed.content), /SUCCEEDED\nEcho: deferred/);
  },
);

testWith(
  [referenceServersNeed],
  'tern run: mcpToolSearch "never" sends every MCP schema and no tool_search',
  async () => {
    const requests = await runWith(
      { TERN_CONTEXT_WINDOW: "8000", TERN_MCP_TOOL_SEARCH: "never" },
      [{ text: "done" }],
    );
    const names = (requests[0].tools ?? []).map((tool) => tool.name);
    ok(names.includes("mcp__everything__echo"), names.join(", "));
    ok(!names.includes("tool_search"));
  },
);
