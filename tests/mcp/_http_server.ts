/** A Streamable HTTP MCP server for the tests of what tern does with a hostile one. */

/**
 * A Streamable HTTP MCP server of one tool, `echo`; its GET stream (the server's own messages)
 * sends `get` ("endless": one event that never ends; "idle": a comment, then nothing, open;
 * "pings": `ping` requests whose ids have `idChars` characters, as fast as they are taken;
 * "closes": `retry: 0`, then the stream ends at once, asking to be opened again right away).
 * `answers` counts the POSTs that carried no request (tern's answers to its pings), `gets` the
 * GET streams asked for.
 */
export function httpServer(get: "endless" | "idle" | "pings" | "closes", idChars = 300) {
  let answers = 0;
  let gets = 0;
  const getStreams: Array<{ ended: Promise<void> }> = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (req.method === "GET") gets++;
    if (req.method === "GET" && get === "closes") {
      return new Response("retry: 0\n\n", { headers: { "content-type": "text/event-stream" } });
    }
    if (req.method === "GET") {
      const { promise: ended, resolve } = Promise.withResolvers<void>();
      getStreams.push({ ended });
      req.signal.addEventListener("abort", () => resolve());
      const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(get === "endless" ? "data: " : ": hi\n\n"));
        },
        async pull(controller) {
          if (get === "idle") return await ended;
          if (get === "pings") {
            const id = `${crypto.randomUUID()}${"i".repeat(idChars)}`.slice(0, idChars);
            const ping = JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
            controller.enqueue(new TextEncoder().encode(`data: ${ping}\n\n`));
            return await new Promise((r) => setTimeout(r, 1));
          }
          controller.enqueue(chunk);
          await new Promise((r) => setTimeout(r, 1));
        },
        cancel() {
          resolve();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }
    if (req.method === "DELETE") return new Response(null, { status: 200 });
    const message = await req.json();
    if (message.method === undefined) answers++;
    if (message.id === undefined || message.method === undefined) {
      return new Response(null, { status: 202 });
    }
    const result = message.method === "initialize"
      ? {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "http", version: "1" },
      }
      : message.method === "tools/list"
      ? { tools: [{ name: "echo", inputSchema: { type: "object" } }] }
      : { content: [{ type: "text", text: "echoed" }] };
    return Response.json({ jsonrpc: "2.0", id: message.id, result });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    getStreams,
    answers: () => answers,
    gets: () => gets,
    close: () => server.shutdown(),
  };
}
