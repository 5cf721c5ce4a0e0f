/**
 * What a hostile server's listing and errors can make tern show or send: never a secret its
 * config hands it, echoed in a tool's name, description or schema (what `tern mcp tools` prints
 * and every request to the model carries), never an error of unbounded length, and never two
 * tools under one name (of which the model, the gate and a person would each see another). Real server processes, the SDK's client.
 */
import { equal, match, ok } from "node:assert/strict";
import { MAX_ERROR_CHARS } from "../../src/mcp/connection.ts";
import { ERROR_CHARS, hostileServerCommand } from "./_hostile_server.ts";
import { stdioServer, withManager } from "./_servers.ts";

const TOKEN = "srvtok_5d4c3b2a19f8e7d6";
const signal = new AbortController().signal;

Deno.test("McpManager gives neither the model nor a person the secret a server echoes in its tools", async () => {
  const server = stdioServer("echoes", hostileServerCommand("secret"), {
    env: { API_TOKEN: TOKEN },
  });
  await withManager([server], async (manager) => {
    const status = await manager.startServer("echoes");
    equal(status.state, "READY", status.error);
    const listed = JSON.stringify(manager.toolsOf("echoes"));
    const [tool] = manager.tools();
    const offered = JSON.stringify([tool.name, tool.description, tool.parameters]);
    for (const text of [listed, offered, JSON.stringify(status.server)]) {
      ok(!text.includes(TOKEN), text);
      match(text, /\[REDACTED\]/);
    }
    // The call still reaches the tool by the server's own name.
    const result = await tool.run({}, { signal });
    equal(result.status, "SUCCEEDED", JSON.stringify(result));
    equal(result.status === "SUCCEEDED" ? result.output : "", `called get_${TOKEN}`);
    const direct = await manager.call("echoes", "get_[REDACTED]", {}, signal);
    equal(direct.status, "SUCCEEDED", JSON.stringify(direct));
  });
});

Deno.test("McpManager offers one tool, the first listed, for a name a server lists twice", async () => {
  await withManager([stdioServer("twice", hostileServerCommand("twice"))], async (manager) => {
    const status = await manager.startServer("twice");
    equal(status.state, "READY", status.error);
    equal(status.tools, 1);
    equal(manager.toolsOf("twice").length, 1);
    const [tool, ...more] = manager.tools();
    equal(more.length, 0);
    equal(tool.name, "mcp__twice__x");
    equal(tool.readOnly, false);
    match(tool.description, /^Changes things/);
  });
});

Deno.test("an MCP call's error is masked and cut at MAX_ERROR_CHARS", async () => {
  const server = stdioServer("loud", hostileServerCommand("error"), { env: { API_TOKEN: TOKEN } });
  await withManager([server], async (manager) => {
    const [tool] = (await manager.startServer("loud"), manager.tools());
    const result = await tool.run({}, { signal });
    equal(result.status, "ERROR");
    const message = result.status === "ERROR" ? result.message : "";
    ok(!message.includes(TOKEN), message.slice(0, 200));
    ok(message.length < MAX_ERROR_CHARS + 100, `${message.length} of ${ERROR_CHARS} characters`);
    match(message, /refused \[REDACTED\] x+… \(\d+ more characters\)$/);
  });
});

Deno.test("McpManager.call() of a tool whose schema is too large says so", async () => {
  await withManager([stdioServer("big", hostileServerCommand("large"))], async (manager) => {
    await manager.startServer("big");
    const call = manager.call("big", "huge", {}, signal);
    const error = await call.then(() => undefined, (error: Error) => error);
    match(error?.message ?? "", /"huge".*input schema takes more than 64 KB/);
  });
});
