/**
 * What a failing server's words can put on the person's screen (`tern mcp list`, a run's
 * warnings, a call's error): never a secret the config hands it, echoed back (an HTTP 401's body
 * quoting the `Authorization` header or the URL's `api_key`, a crash's stderr printing its
 * token), and never more than `MAX_ERROR_CHARS` of its text.
 */
import { equal, match, ok } from "node:assert/strict";
import { MAX_ERROR_CHARS } from "../../src/mcp/connection.ts";
import type { McpServerConfig } from "../../src/mcp/types.ts";
import { faultServer, stdioServer, withManager } from "./_servers.ts";

const TOKEN = "tok_live_9f8e7d6c5b4a39281";
const QUERY_KEY = "qk_7a6b5c4d3e2f1a0b9c8d";
const ENV_TOKEN = "envtok_1f2e3d4c5b6a79881";

function httpConfig(name: string, url: string, headers: Record<string, string>): McpServerConfig {
  return {
    ...stdioServer(name, { command: "", args: [] }),
    transport: "http",
    command: undefined,
    url,
    headers,
  };
}

Deno.test("McpConnection.error masks the secrets a server echoes and is cut at MAX_ERROR_CHARS", async () => {
  // Answers every request 401, quoting what it was sent, and then a megabyte of padding.
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const echo = `invalid credentials: ${request.headers.get("authorization")} for ${request.url}`;
    return new Response(`${echo} ${"x".repeat(1024 * 1024)}`, { status: 401 });
  });
  const url = `http://127.0.0.1:${server.addr.port}/mcp?api_key=${QUERY_KEY}&plain=1`;
  const crash = stdioServer("crash", {
    command: "bash",
    args: ["-c", 'echo "starting with token $API_TOKEN" >&2; exit 3'],
  }, { env: { API_TOKEN: ENV_TOKEN } });
  try {
    await withManager([
      httpConfig("remote", url, { Authorization: `Bearer ${TOKEN}` }),
      crash,
    ], async (manager) => {
      manager.start();
      await manager.settled();
      const [remote, crashed] = manager.status();
      equal(remote.state, "FAILED");
      const head = remote.error!.slice(0, 300);
      ok(!remote.error!.includes(TOKEN), head);
      ok(!remote.error!.includes(QUERY_KEY), head);
      match(head, /invalid credentials: \[REDACTED\] for /);
      ok(remote.error!.length < MAX_ERROR_CHARS + 100, `${remote.error!.length} characters`);
      match(remote.error!.slice(-100), /… \(\d+ more characters\)$/);
      equal(crashed.state, "FAILED");
      match(crashed.error!, /starting with token \[REDACTED\]/);
      ok(!crashed.error!.includes(ENV_TOKEN), crashed.error);
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("McpManager.call() masks the secrets a server's config hands it in what it answers", async () => {
  const server = faultServer("echoes", "ok", { env: { API_TOKEN: ENV_TOKEN } });
  await withManager([server], async (manager) => {
    const signal = new AbortController().signal;
    const result = await manager.call("echoes", "echo", { message: `got ${ENV_TOKEN}` }, signal);
    equal(result.status, "SUCCEEDED");
    equal(result.status === "SUCCEEDED" ? result.output : "", "echo: got [REDACTED]");
  });
});
