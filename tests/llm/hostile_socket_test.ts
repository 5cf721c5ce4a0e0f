/**
 * A hostile or stuck Responses server on the WebSocket transport: one that keeps the socket
 * busy with events that carry no content. The socket must end it as the HTTP transport does
 * (five idle timeouts without content), not hold the turn until the request timeout.
 */
import assert from "node:assert/strict";
import { httpStreamConfig } from "../../src/llm/http_stream.ts";
import { ResponsesSocketPool, socketUrl } from "../../src/llm/openai_responses_socket.ts";
import type { StreamEvent } from "../../src/llm/types.ts";

Deno.test("ResponsesSocketPool.stream() ends a response that sends only empty events after five idle timeouts", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    let timer: ReturnType<typeof setInterval> | undefined;
    socket.addEventListener("message", () => {
      socket.send(JSON.stringify({ type: "response.created", response: { id: "r1" } }));
      timer = setInterval(() => {
        if (socket.readyState === WebSocket.OPEN) {
          socket.send(JSON.stringify({ type: "response.in_progress" }));
        }
      }, 20);
    });
    socket.addEventListener("close", () => clearInterval(timer));
    return response;
  });
  const baseUrl = `http://127.0.0.1:${server.addr.port}/v1`;
  const http = httpStreamConfig(
    { baseUrl, apiKey: "k", requestTimeoutMs: 15_000, idleTimeoutMs: 200 },
    "/responses",
    {},
  );
  const pool = new ResponsesSocketPool({ url: socketUrl(baseUrl), headers: {}, http });
  try {
    const request = {
      model: "m",
      messages: [{ role: "user" as const, content: "hi" }],
      tools: [],
      cacheKey: "k",
    };
    const events: StreamEvent[] = [];
    const overHttp = async function* (): AsyncGenerator<StreamEvent> {
      yield { type: "error", kind: "client", message: "over http" };
    };
    const started = Date.now();
    for await (const event of pool.stream(request, AbortSignal.timeout(20_000), overHttp)) {
      events.push(event);
    }
    const elapsed = Date.now() - started;
    const last = events.at(-1);
    assert.equal(last?.type, "error");
    assert.ok(elapsed < 5_000, `waited ${elapsed} ms, for the request timeout`);
    assert.match((last as { message: string }).message, /no content for 1000 ms/);
    assert.equal((last as { longTimeout?: boolean }).longTimeout, true);
  } finally {
    await pool.close();
    await server.shutdown();
  }
});
