/**
 * What an HTTP MCP server can make tern send: a GET stream it ends at once, with `retry: 0`, is
 * opened again at most once a second, not as fast as the server answers.
 */
import { equal, ok } from "node:assert/strict";
import { MIN_GET_INTERVAL_MS } from "../../src/mcp/http_transport.ts";
import type { McpServerConfig } from "../../src/mcp/types.ts";
import { stdioServer, withManager } from "./_servers.ts";
import { httpServer } from "./_http_server.ts";

function httpConfig(name: string, url: string): McpServerConfig {
  return {
    ...stdioServer(name, { command: "", args: [] }),
    transport: "http",
    command: undefined,
    url,
  };
}

Deno.test("an HTTP MCP server that ends its GET stream at once is asked again once a second at most", async () => {
  const server = httpServer("closes");
  try {
    await withManager([httpConfig("h", server.url)], async (manager) => {
      manager.start();
      await manager.settled();
      equal(manager.status()[0].state, "READY", manager.status()[0].error);
      const waited = 2500;
      await new Promise((resolve) => setTimeout(resolve, waited));
      const most = Math.ceil(waited / MIN_GET_INTERVAL_MS) + 1;
      ok(server.gets() <= most, `${server.gets()} GET streams in ${waited} ms`);
      // Its tools still work meanwhile.
      const result = await manager.call("h", "echo", {}, new AbortController().signal);
      equal(result.status, "SUCCEEDED");
    });
  } finally {
    await server.close();
  }
});
