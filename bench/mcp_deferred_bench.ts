/**
 * Deferred MCP tools: the tokens the MCP tools' specs cost in every request when sent in full,
 * against the index (`tool_search` with one line per tool) sent instead, for the npm reference
 * servers (server-everything and server-filesystem, alone and together), and what one search
 * that loads a few tools adds back. Token counts are tern's estimate (src/context/tokens.ts,
 * within ±10% of o200k_base). Writes bench/results/mcp_deferred.md.
 *
 *   deno run -A bench/mcp_deferred_bench.ts
 */
import { McpManager } from "../src/mcp/manager.ts";
import type { McpTool } from "../src/mcp/mcp_tool.ts";
import { DeferredTools, specTokens } from "../src/harness/deferred_tools.ts";
import { createToolSearchTool } from "../src/harness/tool_search.ts";
import type { McpServerConfig } from "../src/mcp/types.ts";
import { denoNpm, EVERYTHING, FILESYSTEM, stdioServer, testEnv } from "../tests/mcp/_servers.ts";

async function toolsOf(servers: McpServerConfig[]): Promise<McpTool[]> {
  const manager = new McpManager({
    servers,
    trusted: () => true,
    workspace: Deno.cwd(),
    clientVersion: "bench",
    baseEnv: testEnv(),
  });
  try {
    manager.start();
    await manager.settled();
    for (const status of manager.status()) {
      if (status.state !== "READY") throw new Error(`${status.name}: ${status.error}`);
    }
    return manager.tools();
  } finally {
    await manager.close();
  }
}

interface Row {
  servers: string;
  tools: number;
  full: number;
  index: number;
  afterSearch: number;
}

function measure(label: string, tools: McpTool[], query: string): Row {
  const deferred = new DeferredTools("always", 128_000);
  deferred.update(tools);
  const search = createToolSearchTool(deferred);
  const index = specTokens([search]);
  const loaded = deferred.search(query, 3);
  return {
    servers: label,
    tools: tools.length,
    full: specTokens(tools),
    index,
    afterSearch: index + specTokens(loaded),
  };
}

const root = await Deno.makeTempDir({ prefix: "tern-bench-fs-" });
try {
  const everything = stdioServer("everything", denoNpm(EVERYTHING, "stdio"));
  const filesystem = stdioServer("filesystem", denoNpm(FILESYSTEM, root));
  const rows = [
    measure("server-everything", await toolsOf([everything]), "echo sum"),
    measure("server-filesystem", await toolsOf([filesystem]), "read file"),
    measure("both", await toolsOf([everything, filesystem]), "read file"),
  ];
  const lines = [
    "# Deferred MCP tools: tokens per request",
    "",
    `${new Date().toISOString().slice(0, 10)}, \`deno run -A bench/mcp_deferred_bench.ts\`, ` +
    `${EVERYTHING}, ${FILESYSTEM}. Tokens are tern's estimate (src/context/tokens.ts).`,
    "",
    "| servers | tools | all schemas | index (`tool_search`) | saved | index + 3 loaded |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.servers} | ${r.tools} | ${r.full} | ${r.index} | ${r.full - r.index} ` +
      `(${Math.round((1 - r.index / r.full) * 100)}%) | ${r.afterSearch} |`
    ),
    "",
  ];
  const text = lines.join("\n");
  console.log(text);
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(new URL("./results/mcp_deferred.md", import.meta.url), text);
} finally {
  await Deno.remove(root, { recursive: true });
}
