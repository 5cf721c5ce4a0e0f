/**
 * A hostile MCP server that floods tern with messages (notifications of any kind, as fast as
 * its pipe takes them) cannot hold tern's event loop: past {@linkcode MAX_MESSAGES_PER_SECOND}
 * in one second the server is failed with an error naming it, and its process group stopped.
 * A legitimate burst (progress notifications of a long call) passes. Real processes, the real
 * transports.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { cappedFetch, StreamableHTTPClientTransport } from "../../src/mcp/http_transport.ts";
import { StdioProcessTransport } from "../../src/mcp/stdio_transport.ts";
import { limitedTransport, MAX_MESSAGES_PER_SECOND } from "../../src/mcp/transport_limits.ts";
import { testEnv } from "./_servers.ts";

/** A Deno script as the server: `deno eval <code>` with the test's Deno. */
function script(code: string) {
  return { command: Deno.execPath(), args: ["eval", "--no-config", code] };
}

/** A server that writes `count` notifications in batches as fast as it can (all: forever). */
function flooder(count: number | "all"): string {
  const line = JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 1, progress: 1 },
  });
  return `const batch = new TextEncoder().encode(${JSON.stringify(line + "\n")}.repeat(1000));
    for (let sent = 0; ${count === "all" ? "true" : `sent < ${count}`}; sent += 1000) {
      await Deno.stdout.write(batch);
    }
    for await (const _ of Deno.stdin.readable) { /* until closed */ }`;
}

async function started(code: string) {
  const cwd = await Deno.makeTempDir({ prefix: "tern_mcp_hostile_flood_" });
  const inner = new StdioProcessTransport({
    ...script(code),
    cwd,
    env: testEnv(),
    label: 'MCP server "x"',
  });
  const transport = limitedTransport(inner, 'MCP server "x"');
  // Every message the stdio transport parsed, passed on or not.
  let parsed = 0;
  const passOn = inner.onmessage!;
  inner.onmessage = (message) => {
    parsed++;
    passOn(message);
  };
  const errors: string[] = [];
  let messages = 0;
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  let parsedAtError = 0;
  transport.onerror = (error) => {
    parsedAtError ||= parsed;
    errors.push(error.message);
  };
  transport.onclose = () => resolve();
  transport.onmessage = () => messages++;
  await transport.start();
  return {
    transport,
    inner,
    errors,
    closed,
    messages: () => messages,
    /** Messages parsed since the first error. */
    parsedAfterError: () => parsed - parsedAtError,
    async end() {
      await transport.close();
      await Deno.remove(cwd, { recursive: true });
    },
  };
}

/** Runs `op` and the longest the event loop was held meanwhile, in milliseconds. */
async function longestStall(op: () => Promise<void>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    await op();
  } finally {
    clearInterval(timer);
  }
  return longest;
}

Deno.test("a stdio MCP server flooding notifications is failed, its group stopped", async () => {
  const server = await started(flooder("all"));
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => timer = setTimeout(resolve, 10_000));
    const stall = await longestStall(() => Promise.race([server.closed, late]));
    clearTimeout(timer);
    deepEqual(server.errors, [
      `MCP server "x" sent more than ${MAX_MESSAGES_PER_SECOND} messages in one second`,
    ]);
    ok(server.inner.exitStatus !== undefined, "the server still runs");
    // What it writes while it is stopped (a second or two) is not parsed.
    ok(server.parsedAfterError() < 5000, `${server.parsedAfterError()} parsed after the error`);
    // Parsing the bound's 10,000 messages takes a fraction of a second, once.
    ok(stall < 1000, `the event loop was held for ${Math.round(stall)} ms`);
  } finally {
    await server.end();
  }
});

Deno.test("a burst of progress notifications under the bound passes whole", async () => {
  const count = MAX_MESSAGES_PER_SECOND / 2;
  const server = await started(flooder(count));
  try {
    const deadline = Date.now() + 20_000;
    while (server.messages() < count && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    equal(server.messages(), count);
    deepEqual(server.errors, []);
  } finally {
    await server.end();
  }
});

Deno.test("a Streamable HTTP MCP server flooding an event stream is failed and let go", async () => {
  const event = `data: ${
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } })
  }\n\n`;
  const { promise: letGo, resolve: cancelled } = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const batch = new TextEncoder().encode(event.repeat(1000));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(batch);
      },
      cancel: () => cancelled(),
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  const capped = cappedFetch('MCP server "w"');
  const transport = limitedTransport(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.addr.port}/mcp`), {
      fetch: capped.fetch,
    }),
    'MCP server "w"',
  );
  const errors: string[] = [];
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  transport.onerror = (error) => errors.push(error.message);
  transport.onclose = () => resolve();
  transport.onmessage = () => {};
  try {
    await transport.start();
    await transport.send({ jsonrpc: "2.0", id: 1, method: "ping" });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closed, new Promise((resolve) => timer = setTimeout(resolve, 10_000))]);
    clearTimeout(timer);
    equal(
      errors[0],
      `MCP server "w" sent more than ${MAX_MESSAGES_PER_SECOND} messages in one second`,
    );
    // The stream is let go when the transport closes (McpConnection cancels what it left open).
    await capped.cancelAll();
    const late = new Promise((resolve) => timer = setTimeout(() => resolve("late"), 10_000));
    equal(await Promise.race([letGo.then(() => "let go"), late]), "let go");
    clearTimeout(timer);
  } finally {
    await transport.close();
    await capped.cancelAll();
    await server.shutdown();
  }
});
