/**
 * The MCP SDK's own server in this process, over its in-memory transport, listing the tools a
 * test gives it; tern's connection and tool adapter on the other end are the real ones.
 *
 * Run as `deno run tests/mcp/_in_memory_server.ts <input schema JSON> <JSON list of arguments>
 * [output schema JSON]` (or get that command line from {@linkcode checkCommand}), it calls a tool
 * of that schema (and output schema: it answers with its arguments as its result) with
 * each of those arguments in turn and prints the observations as one JSON list: a check that
 * could freeze its process then freezes only this one, which a test can kill.
 */
import { fileURLToPath } from "node:url";
import { equal, ok } from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/server"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Observation } from "../../src/core/observation.ts";
import { McpConnection, type McpToolInfo } from "../../src/mcp/connection.ts";
import { type McpTool, mcpTool } from "../../src/mcp/mcp_tool.ts";
import { stdioServer } from "./_servers.ts";

/** What a server was called with, in order. */
export type Calls = { tool: string; args: unknown }[];

/**
 * A READY connection named `name` to an SDK server listing `tools` (each answering with its
 * arguments as JSON), and the calls the server got; closed after `body`.
 */
export async function withServer(
  name: string,
  tools: (McpToolInfo & { outputSchema?: unknown })[],
  body: (connection: McpConnection, calls: Calls) => Promise<void>,
): Promise<void> {
  const calls: Calls = [];
  const server = new Server({ name, version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    calls.push({ tool: request.params.name, args: request.params.arguments });
    const text = JSON.stringify(request.params.arguments);
    // A tool with an output schema answers with its arguments as its structured result too.
    const structured = tools.some((tool) => tool.name === request.params.name && tool.outputSchema)
      ? { structuredContent: request.params.arguments }
      : {};
    return { content: [{ type: "text", text }], ...structured };
  });
  const connection = new McpConnection({
    // The transport comes from `connect`: the command line is never run.
    config: stdioServer(name, { command: "unused", args: [] }),
    connect: async () => {
      const [client, ours] = InMemoryTransport.createLinkedPair();
      await server.connect(ours);
      return { transport: client };
    },
    clientVersion: "test",
  });
  try {
    await connection.start();
    equal(connection.state, "READY", connection.error);
    await body(connection, calls);
  } finally {
    await connection.close();
    await server.close();
  }
}

/** The connection's tool `tool`, as the model knows it. */
export function toolOf(connection: McpConnection, tool: string): McpTool {
  const info = connection.tools.find((listed) => listed.name === tool);
  ok(info, `"${tool}" is listed`);
  return mcpTool(connection, info, `mcp__${connection.name}__${tool}`, true);
}

/** Calls `tool` with `args`, never cancelled. */
export function call(tool: McpTool, args: unknown): Promise<Observation> {
  return tool.run(args, { signal: new AbortController().signal });
}

/** The command line that checks each of `calls` against `schema` in a process of its own. */
export function checkCommand(
  schema: unknown,
  calls: unknown[],
  outputSchema?: unknown,
): { command: string; args: string[] } {
  const script = fileURLToPath(import.meta.url);
  const config = fileURLToPath(new URL("../../deno.json", import.meta.url));
  return {
    command: Deno.execPath(),
    args: [
      "run",
      "--no-prompt",
      "--allow-read",
      "--allow-env",
      `--config=${config}`,
      script,
      JSON.stringify(schema),
      JSON.stringify(calls),
      ...(outputSchema === undefined ? [] : [JSON.stringify(outputSchema)]),
    ],
  };
}

if (import.meta.main) {
  const [schema, calls, outputSchema] = Deno.args.map((arg) => JSON.parse(arg));
  const listed = { name: "tool", inputSchema: schema, ...(outputSchema ? { outputSchema } : {}) };
  await withServer("check", [listed], async (connection) => {
    const tool = toolOf(connection, "tool");
    const observations = [];
    for (const args of calls) observations.push(await call(tool, args));
    console.log(JSON.stringify(observations));
  });
}
