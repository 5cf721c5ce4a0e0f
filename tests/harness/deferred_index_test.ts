/**
 * The size of `tool_search`'s index over a real server that lists thousands of tools: bounded
 * by a share of what deferring saves, the rest found by searching.
 */
import { equal, match, ok } from "node:assert/strict";
import {
  DeferredTools,
  INDEX_SHARE,
  MIN_INDEX_TOKENS,
  specTokens,
} from "../../src/harness/deferred_tools.ts";
import { estimateTokens } from "../../src/context/tokens.ts";
import type { McpTool } from "../../src/mcp/mcp_tool.ts";
import { stdioServer, withManager } from "../mcp/_servers.ts";

const TOOLS = 3_000;

/** A server (raw JSON-RPC lines) listing `TOOLS` tools with a long description each. */
const SERVER = `
const tools = Array.from({ length: ${TOOLS} }, (_, i) => ({
  name: "tool_" + String(i).padStart(4, "0"),
  description: "Does thing number " + i + " " + "with many words ".repeat(10),
  inputSchema: { type: "object", properties: { a: { type: "string" } } },
}));
const write = (m) => Deno.stdout.write(new TextEncoder().encode(JSON.stringify(m) + "\\n"));
let buffer = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += chunk;
  let end;
  while ((end = buffer.indexOf("\\n")) >= 0) {
    const request = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    if (request.id === undefined) continue;
    const result = request.method === "initialize"
      ? { protocolVersion: "2025-06-18", capabilities: { tools: {} },
          serverInfo: { name: "many", version: "1" } }
      : request.method === "tools/list" ? { tools } : {};
    await write({ jsonrpc: "2.0", id: request.id, result });
  }
}`;

async function manyTools(): Promise<McpTool[]> {
  let tools: McpTool[] = [];
  const server = stdioServer("many", {
    command: Deno.execPath(),
    args: ["eval", "--no-config", SERVER],
  });
  await withManager([server], async (manager) => {
    const status = await manager.startServer("many");
    equal(status.state, "READY", status.error);
    tools = manager.tools();
  });
  return tools;
}

Deno.test("DeferredTools.index() stops at a share of the budget and says how many more", async () => {
  const tools = await manyTools();
  equal(tools.length, TOOLS);
  const window = 200_000;
  const deferred = new DeferredTools("auto", window);
  ok(deferred.update(tools));
  const index = deferred.index();
  const cap = window * 0.1 * INDEX_SHARE;
  ok(estimateTokens(index) <= cap + 50, `index of ${estimateTokens(index)} tokens`);
  ok(estimateTokens(index) < specTokens(tools) / 10);
  const listed = index.split("\n").filter((line) => line.startsWith("- ")).length;
  ok(listed > 100, `only ${listed} tools listed`);
  match(
    index,
    new RegExp(
      `\\n\\(${TOOLS - listed} more tools not listed, of many \\(${
        TOOLS - listed
      }\\): search by words to find them\\)$`,
    ),
  );
  // The first tools in name order are listed; a search still finds one that is not.
  match(index, /^- mcp__many__tool_0000: Does thing number 0 with many words/);
  equal(deferred.search("tool_2999")[0]?.name, "mcp__many__tool_2999");
  // Loading a tool changes nothing before it in the request.
  equal(deferred.index(), index);

  // A tiny window still lists some tools.
  const small = new DeferredTools("always", 1_000);
  small.update(tools);
  const smallIndex = small.index();
  ok(estimateTokens(smallIndex) <= MIN_INDEX_TOKENS + 50);
  match(smallIndex, /^- mcp__many__tool_0000/);
});

Deno.test("DeferredTools.index() lists every tool when they fit", async () => {
  const tools = (await manyTools()).slice(0, 20);
  const deferred = new DeferredTools("always", 200_000);
  deferred.update(tools);
  const index = deferred.index();
  equal(index.split("\n").length, 20);
  ok(!index.includes("more tools not listed"));
});
