/**
 * An HTTP MCP server's failures name it by its name and origin, never by the URL's user,
 * password, path or query (which may carry a key): one that cannot be reached, one that answers
 * a call with an HTTP error. Real HTTP servers on 127.0.0.1, the SDK's client.
 */
import { equal, match, ok } from "node:assert/strict";
import { watchMcp } from "../../src/harness/mcp_setup.ts";
import type { McpServerConfig } from "../../src/mcp/types.ts";
import { stdioServer, withManager } from "./_servers.ts";

function httpConfig(name: string, url: string): McpServerConfig {
  return {
    ...stdioServer(name, { command: "", args: [] }),
    transport: "http",
    command: undefined,
    url,
    headers: { Authorization: "Bearer header-secret-123456" },
  };
}

/** A port nothing listens on. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A server whose initialize and tools/list work and whose calls fail with HTTP 500. */
function failingCalls() {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method === "GET") return new Response(null, { status: 405 });
    if (req.method === "DELETE") return new Response(null, { status: 200 });
    const message = await req.json();
    if (message.id === undefined) return new Response(null, { status: 202 });
    if (message.method === "tools/call") return new Response("upstream broke", { status: 500 });
    const result = message.method === "initialize"
      ? {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "h", version: "1" },
      }
      : { tools: [{ name: "echo", inputSchema: { type: "object" } }] };
    return Response.json({ jsonrpc: "2.0", id: message.id, result });
  });
  return { port: server.addr.port, close: () => server.shutdown() };
}

const SECRETS = ["hunter2-password", "query-secret-789", "header-secret-123456"];

Deno.test("an HTTP MCP server that cannot be reached is named by name and origin, its credentials hidden", async () => {
  const port = closedPort();
  const url = `http://alice:hunter2-password@127.0.0.1:${port}/mcp/path?token=query-secret-789`;
  const warnings: string[] = [];
  await withManager([httpConfig("dead", url)], async (manager) => {
    watchMcp(manager, (text) => warnings.push(text));
    manager.start();
    await manager.settled();
    const [status] = manager.status();
    equal(status.state, "FAILED");
    equal(status.label, `MCP server "dead" at http://127.0.0.1:${port}`);
    match(
      status.error!,
      new RegExp(`the request to http://127\\.0\\.0\\.1:${port} failed: .*refused`),
    );
    equal(warnings.length, 1, warnings.join("\n"));
    match(warnings[0], new RegExp(`^MCP server "dead" at http://127\\.0\\.0\\.1:${port} failed`));
    const call = await manager.call("dead", "echo", {}, new AbortController().signal)
      .then(() => "called", (error: Error) => error.message);
    match(call, new RegExp(`on MCP server "dead" at http://127\\.0\\.0\\.1:${port}: it is FAILED`));
    for (const text of [status.error!, ...warnings, call]) {
      for (const secret of SECRETS) ok(!text.includes(secret), text);
      ok(!text.includes("/mcp/path"), text);
    }
  });
});

Deno.test("an HTTP MCP server's failed call names the server and its origin", async () => {
  const server = failingCalls();
  try {
    const url = `http://127.0.0.1:${server.port}/mcp?token=query-secret-789`;
    await withManager([httpConfig("boom", url)], async (manager) => {
      manager.start();
      await manager.settled();
      equal(manager.status()[0].state, "READY");
      const result = await manager.tool("mcp__boom__echo")!.run({}, {
        signal: new AbortController().signal,
      });
      equal(result.status, "ERROR");
      const message = result.status === "ERROR" ? result.message : "";
      match(message, new RegExp(`MCP server "boom" at http://127\\.0\\.0\\.1:${server.port}: `));
      match(message, /upstream broke/);
      for (const secret of SECRETS) ok(!message.includes(secret), message);
    });
  } finally {
    await server.close();
  }
});

Deno.test("an HTTP MCP server that never answers notifications/initialized fails at its startup timeout", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const message = await req.json();
    // The POST carrying the notification is held until tern lets it go.
    if (message.id === undefined) {
      await new Promise((resolve) => req.signal.addEventListener("abort", resolve));
      return new Response(null, { status: 202 });
    }
    return Response.json({
      jsonrpc: "2.0",
      id: message.id,
      result: {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "h", version: "1" },
      },
    });
  });
  try {
    const config = {
      ...httpConfig("held", `http://127.0.0.1:${server.addr.port}/mcp`),
      startupTimeoutMs: 1_000,
    };
    await withManager([config], async (manager) => {
      const started = performance.now();
      manager.start();
      await manager.settled();
      const [status] = manager.status();
      equal(status.state, "FAILED");
      match(status.error!, /did not finish starting within 1000 ms/);
      ok(performance.now() - started < 5_000, "the start ended at its timeout");
    });
  } finally {
    await server.shutdown();
  }
});
