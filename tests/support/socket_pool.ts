/**
 * A bare WebSocket server on 127.0.0.1 that plays a hostile or stuck Responses server, and the
 * real `ResponsesSocketPool` connected to it: for tests of what the socket transport does
 * with what such a server sends.
 */
import { httpStreamConfig } from "../../src/llm/http_stream.ts";
import { ResponsesSocketPool, socketUrl } from "../../src/llm/openai_responses_socket.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";

/** The request every such test sends: one short user message, with a cache key. */
export const SOCKET_REQUEST: ModelRequest = {
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  cacheKey: "k",
};

/** The pool's timeouts, and the key it sends (none when left out). */
export interface SocketPoolOptions {
  apiKey?: string;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
}

/**
 * Runs `body` with a pool connected to a server whose every accepted socket is handed to
 * `accept`; the pool and the server are closed after, whatever `body` did.
 */
export async function withSocketPool(
  accept: (socket: WebSocket) => void,
  options: SocketPoolOptions,
  body: (pool: ResponsesSocketPool) => Promise<void>,
): Promise<void> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    accept(socket);
    return response;
  });
  const baseUrl = `http://127.0.0.1:${server.addr.port}/v1`;
  const http = httpStreamConfig({ baseUrl, ...options }, "/responses", {});
  const pool = new ResponsesSocketPool({ url: socketUrl(baseUrl), headers: {}, http });
  try {
    await body(pool);
  } finally {
    await pool.close();
    await server.shutdown();
  }
}

/** Every event of one `pool.stream()`, with `overHttp` as its HTTP fallback. */
export async function streamOverSocket(
  pool: ResponsesSocketPool,
  overHttp: () => AsyncGenerator<StreamEvent>,
  options: { request?: ModelRequest; signal?: AbortSignal } = {},
): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (
    const event of pool.stream(options.request ?? SOCKET_REQUEST, options.signal, overHttp)
  ) {
    events.push(event);
  }
  return events;
}
