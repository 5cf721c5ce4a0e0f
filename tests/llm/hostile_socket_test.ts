/**
 * A hostile or stuck Responses server on the WebSocket transport: one that keeps the socket
 * busy with events that carry no content. The socket must end it as the HTTP transport does
 * (five idle timeouts without content), not hold the turn until the request timeout.
 */
import assert from "node:assert/strict";
import { streamOverSocket, withSocketPool } from "../support/socket_pool.ts";

Deno.test("ResponsesSocketPool.stream() ends a response that sends only empty events after five idle timeouts", async () => {
  const accept = (socket: WebSocket) => {
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
  };
  // An empty event every 20 ms: the idle timeout leaves room for a loaded machine's late timers.
  await withSocketPool(accept, { requestTimeoutMs: 15_000, idleTimeoutMs: 400 }, async (pool) => {
    const started = Date.now();
    const events = await streamOverSocket(pool, async function* () {
      yield { type: "error", kind: "client", message: "over http" };
    }, { signal: AbortSignal.timeout(20_000) });
    const elapsed = Date.now() - started;
    const last = events.at(-1);
    assert.equal(last?.type, "error");
    assert.ok(elapsed < 10_000, `waited ${elapsed} ms, for the request timeout`);
    assert.match((last as { message: string }).message, /no content for 2000 ms/);
    assert.equal((last as { longTimeout?: boolean }).longTimeout, true);
  });
});
