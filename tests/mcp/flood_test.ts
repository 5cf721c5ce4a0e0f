/**
 * A hostile MCP server cannot make tern hold unbounded memory or keep it from exiting: a stdio
 * server that stops reading while tern writes to it, or sends requests with huge ids (each
 * answer echoes the id), is failed; a Streamable HTTP server's endless event is cut at the cap,
 * and a GET stream it holds open is let go when the connection closes. Real processes, a real
 * HTTP server on 127.0.0.1, the SDK's client.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { cappedFetch, MAX_MESSAGE_BYTES } from "../../src/mcp/http_transport.ts";
import { StdioProcessTransport } from "../../src/mcp/stdio_transport.ts";
import {
  limitedTransport,
  MAX_ID_CHARS,
  MAX_PENDING_CHARS,
} from "../../src/mcp/transport_limits.ts";
import type { McpServerConfig } from "../../src/mcp/types.ts";
import { stdioServer, testEnv, withManager } from "./_servers.ts";
import { httpServer } from "./_http_server.ts";

/** A Deno script as the server: `deno eval <code>` with the test's Deno. */
function script(code: string) {
  return { command: Deno.execPath(), args: ["eval", "--no-config", code] };
}

async function started(code: string) {
  const cwd = await Deno.makeTempDir({ prefix: "tern_mcp_flood_" });
  const transport = limitedTransport(
    new StdioProcessTransport({ ...script(code), cwd, env: testEnv(), label: 'MCP server "x"' }),
    'MCP server "x"',
  );
  const errors: string[] = [];
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  transport.onerror = (error) => errors.push(error.message);
  transport.onclose = () => resolve();
  transport.onmessage = () => {};
  await transport.start();
  return {
    transport,
    errors,
    closed,
    async end() {
      await transport.close();
      await Deno.remove(cwd, { recursive: true });
    },
  };
}

Deno.test("limitedTransport() fails a stdio server that does not read what tern sends", async () => {
  // It never reads its stdin: after the pipe's buffer, every write waits.
  const server = await started("await new Promise(() => {});");
  try {
    const piece = "p".repeat(4 * 1024 * 1024);
    const sends = Array.from(
      { length: 12 },
      (_, i) =>
        server.transport.send({ jsonrpc: "2.0", method: "notifications/x", params: { i, piece } })
          .then(() => "sent", (error: Error) => error.message),
    );
    await server.closed;
    const outcomes = await Promise.all(sends);
    ok(outcomes.every((outcome) => outcome !== "sent"), outcomes.join("\n"));
    ok(
      outcomes.some((outcome) => outcome.endsWith("it does not take what tern sends")),
      outcomes.join("\n"),
    );
    equal(server.errors.length, 1, server.errors.join("\n"));
    match(server.errors[0], /^MCP server "x" does not take what tern sends \(\d+ MiB waiting\)$/);
    ok(MAX_PENDING_CHARS < 12 * piece.length);
  } finally {
    await server.end();
  }
});

Deno.test("limitedTransport() fails a stdio server that sends a message with a huge id", async () => {
  const id = "i".repeat(MAX_ID_CHARS + 1);
  const line = JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
  const server = await started(
    `await Deno.stdout.write(new TextEncoder().encode(${JSON.stringify(line)} + "\\n"));
     for await (const _ of Deno.stdin.readable) { /* until closed */ }`,
  );
  try {
    await server.closed;
    deepEqual(server.errors, [
      `MCP server "x" sent a message whose id has ${MAX_ID_CHARS + 1} characters`,
    ]);
  } finally {
    await server.end();
  }
});

function httpConfig(name: string, url: string): McpServerConfig {
  return {
    ...stdioServer(name, { command: "", args: [] }),
    transport: "http",
    command: undefined,
    url,
  };
}

Deno.test("cappedFetch() cuts an event that passes the cap and lets go of what it left open", async () => {
  const server = httpServer("endless");
  try {
    const capped = cappedFetch('MCP server "w"', 1024 * 1024);
    const response = await capped.fetch(server.url);
    let read = 0;
    let error = "";
    try {
      for await (const chunk of response.body!) read += chunk.length;
    } catch (thrown) {
      error = (thrown as Error).message;
    }
    equal(error, 'MCP server "w" sent a message of more than 1 MiB: refused');
    ok(read <= 1024 * 1024, `${read}`);
    // A stream held open is cancelled by cancelAll(): the server sees its request end.
    const idle = cappedFetch('MCP server "w"');
    await idle.fetch(server.url);
    await idle.cancelAll();
    await Promise.all(server.getStreams.map((stream) => stream.ended));
    equal(MAX_MESSAGE_BYTES, 16 * 1024 * 1024);
  } finally {
    await server.close();
  }
});

Deno.test("an HTTP MCP server's endless event stream is cut, its tools still work, and close ends it", async () => {
  const server = httpServer("endless");
  try {
    await withManager([httpConfig("w", server.url)], async (manager) => {
      manager.start();
      await manager.settled();
      const [status] = manager.status();
      equal(status.state, "READY", status.error);
      const controller = new AbortController();
      deepEqual(await manager.call("w", "echo", {}, controller.signal), {
        status: "SUCCEEDED",
        output: "echoed",
      });
    });
    // Every GET stream the client opened ended with the manager's close.
    ok(server.getStreams.length >= 1);
    await Promise.all(server.getStreams.map((stream) => stream.ended));
  } finally {
    await server.close();
  }
});

Deno.test("an HTTP MCP server that holds its GET stream open is let go at close", async () => {
  const server = httpServer("idle");
  try {
    await withManager([httpConfig("w", server.url)], async (manager) => {
      manager.start();
      await manager.settled();
      equal(manager.status()[0].state, "READY");
    });
    ok(server.getStreams.length >= 1);
    await Promise.all(server.getStreams.map((stream) => stream.ended));
  } finally {
    await server.close();
  }
});

Deno.test("an HTTP MCP server that sends requests with huge ids is failed, its answers never sent", async () => {
  const server = httpServer("pings", MAX_ID_CHARS + 1);
  try {
    await withManager([httpConfig("w", server.url)], async (manager) => {
      manager.start();
      await manager.settled();
      const deadline = Date.now() + 20_000;
      while (manager.status()[0].state === "READY" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const [status] = manager.status();
      equal(status.state, "FAILED");
      match(status.error ?? "", /sent a message whose id has 257 characters/);
    });
    equal(server.answers(), 0);
  } finally {
    await server.close();
  }
});
