/**
 * What a hostile MCP server's descriptions and a model's `tool_search` query can do to the
 * search: stuffed or run-together descriptions cannot take every place in the results, and a
 * name selected twice loads and lists once.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { DeferredTools } from "../../src/harness/deferred_tools.ts";
import { createToolSearchTool } from "../../src/harness/tool_search.ts";
import type { McpTool } from "../../src/mcp/mcp_tool.ts";
import { stdioServer, withManager } from "./_servers.ts";

/** A server (raw JSON-RPC lines) listing `tools` as given. */
function listing(name: string, tools: { name: string; description: string }[]) {
  const script = `
const tools = ${JSON.stringify(tools)}.map((tool) => ({
  ...tool, inputSchema: { type: "object", properties: { a: { type: "string" } } },
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
          serverInfo: { name: ${JSON.stringify(name)}, version: "1" } }
      : request.method === "tools/list" ? { tools } : {};
    await write({ jsonrpc: "2.0", id: request.id, result });
  }
}`;
  return stdioServer(name, { command: Deno.execPath(), args: ["eval", "--no-config", script] });
}

const STUFFING = "open close ticket bug issue file read write search create delete list " +
  "repository github pull request commit branch";

/** The tools of a stuffing server (sorting first), a gluing one and an honest one. */
async function servers(): Promise<McpTool[]> {
  let tools: McpTool[] = [];
  const configs = [
    listing(
      "0stuff",
      Array.from({ length: 20 }, (_, i) => ({ name: `t${i}`, description: STUFFING })),
    ),
    listing("0glue", [{ name: "glued", description: STUFFING.replaceAll(" ", "") }]),
    listing("github", [{
      name: "create_issue",
      description: "Opens a ticket about a bug in a repository",
    }]),
  ];
  await withManager(configs, async (manager) => {
    for (const config of configs) {
      const status = await manager.startServer(config.name);
      equal(status.state, "READY", status.error);
    }
    tools = manager.tools();
  });
  return tools;
}

Deno.test("DeferredTools.search() lets no stuffed description take every place", async () => {
  const deferred = new DeferredTools("always", 128_000);
  deferred.update(await servers());
  const found = deferred.search("open ticket bug", 5).map((tool) => tool.name);
  equal(found.length, 5);
  ok(found.includes("mcp__github__create_issue"), found.join(", "));
  equal(found.filter((name) => name.startsWith("mcp__0stuff__")).length, 4);
  // Words run together match no word: the glued description is found by none of them.
  for (const query of ["ticket", "open bug", "repository"]) {
    const names = deferred.search(query, 10).map((tool) => tool.name);
    ok(!names.includes("mcp__0glue__glued"), `${query}: ${names.join(", ")}`);
  }
});

Deno.test("tool_search loads and lists a name selected twice once", async () => {
  const deferred = new DeferredTools("always", 128_000);
  deferred.update(await servers());
  const search = createToolSearchTool(deferred);
  const name = "mcp__github__create_issue";
  const result = await search.run({ query: `select:${name},${name}, ${name}` }, {
    workspace: "/",
    signal: new AbortController().signal,
  });
  equal(result.status, "SUCCEEDED");
  const output = result.status === "SUCCEEDED" ? result.output : "";
  match(output, /^Loaded 1 tool\(s\); /);
  equal(output.split("\n").filter((line) => line.startsWith(`- ${name} `)).length, 1);
  deepEqual(deferred.loaded, [name]);
});

Deno.test("DeferredTools.index() names the servers past its cut by their whole names", async () => {
  const config = listing(
    "github__evil",
    Array.from({ length: 300 }, (_, i) => ({
      name: `t${String(i).padStart(3, "0")}`,
      description: "A tool with a description long enough to fill the index quickly, ".repeat(3),
    })),
  );
  let tools: McpTool[] = [];
  await withManager([config], async (manager) => {
    const status = await manager.startServer(config.name);
    equal(status.state, "READY", status.error);
    tools = manager.tools();
  });
  const deferred = new DeferredTools("always", 10_000);
  deferred.update(tools);
  const last = deferred.index().split("\n").at(-1) ?? "";
  match(last, /^\(\d+ more tools not listed, of github__evil \(\d+\): /);
});
