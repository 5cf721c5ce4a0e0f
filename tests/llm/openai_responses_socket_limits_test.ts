/**
 * The Responses WebSocket against a server that misbehaves: a handshake never answered, frames
 * sent between answers, more sent than tern reads. Each server is a scripted one on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { StreamTooLargeError } from "../../src/llm/errors.ts";
import { httpStreamConfig } from "../../src/llm/http_stream.ts";
import { ResponsesSocketPool, socketUrl } from "../../src/llm/openai_responses_socket.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";
import { WebSocketInbox } from "../../src/llm/web_socket_inbox.ts";
import { done, lastError } from "../support/stream_events.ts";
import { sleep } from "../support/abortable_wait.ts";

const REQUEST: ModelRequest = {
  model: "gpt-test",
  messages: [{ role: "user", content: "x" }],
  tools: [],
  cacheKey: "k",
};

interface TestServer {
  baseUrl: string;
  /** Handshakes received, and sockets the server saw close. */
  counts: { handshakes: number; closed: number };
  /** Resolves at the first handshake. */
  handshake: Promise<void>;
}

/**
 * Serves `/v1/responses` upgrades: `onSocket` gets each accepted socket; with `hang`, no
 * handshake is ever answered (until the test ends).
 */
async function withServer(
  options: { hang?: boolean; onSocket?: (socket: WebSocket, closing: AbortSignal) => void },
  body: (server: TestServer) => Promise<void>,
): Promise<void> {
  const closing = new AbortController();
  const counts = { handshakes: 0, closed: 0 };
  const { promise: handshake, resolve: handshakeSeen } = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    counts.handshakes++;
    handshakeSeen();
    if (options.hang) {
      req.signal.addEventListener("abort", () => counts.closed++);
      await new Promise((resolve) => closing.signal.addEventListener("abort", resolve));
      return new Response(null, { status: 503 });
    }
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.addEventListener("close", () => counts.closed++);
    options.onSocket?.(socket, closing.signal);
    return response;
  });
  try {
    await body({ baseUrl: `http://127.0.0.1:${server.addr.port}/v1`, counts, handshake });
  } finally {
    closing.abort();
    await server.shutdown();
  }
}

function pool(
  baseUrl: string,
  timeouts: { requestTimeoutMs: number; idleTimeoutMs: number },
): ResponsesSocketPool {
  const http = httpStreamConfig({ baseUrl, ...timeouts }, "/responses", {});
  return new ResponsesSocketPool({ url: socketUrl(baseUrl), headers: {}, http });
}

/** A whole response: created, its text, completed. */
function answer(socket: WebSocket, id: string, text: string): void {
  socket.send(JSON.stringify({ type: "response.created", response: { id } }));
  socket.send(JSON.stringify({ type: "response.output_text.delta", delta: text }));
  socket.send(JSON.stringify({ type: "response.completed", response: { id } }));
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Waits until `condition` holds (a socket closing), polling. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1_000 && !condition(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.ok(condition(), `timed out waiting for ${what}`);
}

Deno.test("ResponsesSocketPool.stream() falls back to HTTP within the idle timeout when the handshake is never answered", async () => {
  await withServer({ hang: true }, async (server) => {
    const sockets = pool(server.baseUrl, { requestTimeoutMs: 20_000, idleTimeoutMs: 200 });
    let overHttp = 0;
    const http = async function* (): AsyncGenerator<StreamEvent> {
      overHttp++;
      yield* [];
    };
    try {
      sockets.warm("k");
      await server.handshake;
      const started = Date.now();
      await collect(sockets.stream(REQUEST, undefined, http));
      const waited = Date.now() - started;
      assert.equal(overHttp, 1);
      assert.ok(waited < 5_000, `waited ${waited} ms: the request timeout, not the idle one`);
      // A server that never answers a handshake is not asked again.
      await collect(sockets.stream(REQUEST, undefined, http));
      assert.equal(overHttp, 2);
      assert.equal(server.counts.handshakes, 1);
    } finally {
      await sockets.close();
    }
  });
});

Deno.test("ResponsesSocketPool.stream() stops waiting for a handshake under way as soon as its own signal fires", async () => {
  await withServer({ hang: true }, async (server) => {
    const sockets = pool(server.baseUrl, { requestTimeoutMs: 20_000, idleTimeoutMs: 20_000 });
    let overHttp = 0;
    const http = async function* (): AsyncGenerator<StreamEvent> {
      overHttp++;
      yield* [];
    };
    try {
      // The socket opens apart from the request (as after a conversation's first round).
      sockets.warm("k");
      await server.handshake;
      const controller = new AbortController();
      const events = collect(sockets.stream(REQUEST, controller.signal, http));
      await sleep(50, AbortSignal.timeout(1_000));
      const started = Date.now();
      controller.abort();
      const ended = await events;
      const waited = Date.now() - started;
      assert.equal(lastError(ended).kind, "aborted");
      assert.ok(waited < 2_000, `waited ${waited} ms after the abort`);
      assert.equal(overHttp, 0);
    } finally {
      await sockets.close();
    }
  });
});

Deno.test("ResponsesSocketPool.close() ends a handshake under way", async () => {
  await withServer({ hang: true }, async (server) => {
    const sockets = pool(server.baseUrl, { requestTimeoutMs: 20_000, idleTimeoutMs: 20_000 });
    sockets.warm("k");
    await server.handshake;
    await sockets.close();
    // A handshake left waiting would keep tern's process alive after the session closed.
    await until(() => server.counts.closed === 1, "the handshake's connection to close");
  });
});

Deno.test("ResponsesSocketPool.stream() never reads what the server sent after an answer ended as the next answer", async () => {
  let round = 0;
  const onSocket = (socket: WebSocket) => {
    socket.addEventListener("message", () => {
      round++;
      answer(socket, `resp_${round}`, `answer ${round}`);
      // A whole response nobody asked for, right behind the real one.
      if (round === 1) answer(socket, "resp_stale", "stale");
    });
  };
  await withServer({ onSocket }, async (server) => {
    const sockets = pool(server.baseUrl, { requestTimeoutMs: 10_000, idleTimeoutMs: 5_000 });
    const http = async function* (): AsyncGenerator<StreamEvent> {
      yield* [];
      throw new Error("not over HTTP");
    };
    try {
      sockets.warm("k");
      assert.equal(
        done(await collect(sockets.stream(REQUEST, undefined, http))).message.content,
        "answer 1",
      );
      // The stale frames arrive before the next request is sent.
      await sleep(100, AbortSignal.timeout(1_000));
      const second = await collect(sockets.stream(REQUEST, undefined, http));
      assert.equal(done(second).message.content, "answer 2");
      assert.equal(
        server.counts.handshakes,
        1,
        "the socket stays: dropping a few frames is no failure",
      );
    } finally {
      await sockets.close();
    }
  });
});

Deno.test("ResponsesSocketPool.stream() closes a socket flooded between answers and opens another", async () => {
  let round = 0;
  const onSocket = (socket: WebSocket, closing: AbortSignal) => {
    socket.addEventListener("message", async () => {
      round++;
      answer(socket, `resp_${round}`, `answer ${round}`);
      if (round !== 1) return;
      // 1 MiB frames without end (bounded here so the old code's test ends): past 64 MiB.
      const frame = JSON.stringify({ type: "junk", pad: "J".repeat(1024 * 1024) });
      for (let i = 0; i < 100 && socket.readyState === WebSocket.OPEN; i++) {
        socket.send(frame);
        await sleep(1, closing).catch(() => {});
      }
    });
  };
  await withServer({ onSocket }, async (server) => {
    const sockets = pool(server.baseUrl, { requestTimeoutMs: 10_000, idleTimeoutMs: 5_000 });
    const http = async function* (): AsyncGenerator<StreamEvent> {
      yield* [];
      throw new Error("not over HTTP");
    };
    try {
      sockets.warm("k");
      assert.equal(
        done(await collect(sockets.stream(REQUEST, undefined, http))).message.content,
        "answer 1",
      );
      await until(() => server.counts.closed === 1, "tern to close the flooded socket");
      const second = await collect(sockets.stream(REQUEST, undefined, http));
      assert.equal(done(second).message.content, "answer 2");
      assert.equal(server.counts.handshakes, 2);
    } finally {
      await sockets.close();
    }
  });
});

Deno.test("WebSocketInbox.next() reports an answer as too large once more than the cap arrived unread, and the socket closes at once", async () => {
  const onSocket = (socket: WebSocket) => {
    socket.addEventListener("message", () => {
      for (let i = 0; i < 20 && socket.readyState === WebSocket.OPEN; i++) {
        socket.send("x".repeat(100));
      }
    });
  };
  await withServer({ onSocket }, async (server) => {
    const inbox = await WebSocketInbox.open(socketUrl(server.baseUrl), {}, {
      timeoutMs: 5_000,
      maxQueuedChars: 1_000,
    });
    try {
      inbox.send("go");
      await until(() => server.counts.closed === 1, "tern to close the socket");
      assert.equal(inbox.broken, true);
      await assert.rejects(
        () => inbox.next(5_000),
        (error) =>
          error instanceof StreamTooLargeError &&
          /more than 1000 characters in one answer/.test(error.message),
      );
    } finally {
      inbox.close();
    }
  });
});

Deno.test("WebSocketInbox drops what arrives between answers, and closes past the cap", async () => {
  let round = 0;
  const onSocket = (socket: WebSocket) => {
    socket.addEventListener("message", () => {
      round++;
      socket.send(`answer ${round}`);
      if (round === 1) socket.send("late");
      if (round === 2) {
        // Once the answer was read: a flood nobody asked for.
        setTimeout(() => {
          for (let i = 0; i < 20 && socket.readyState === WebSocket.OPEN; i++) {
            socket.send("y".repeat(100));
          }
        }, 100);
      }
    });
    // Before anything was asked.
    socket.addEventListener("open", () => socket.send("unasked"));
  };
  await withServer({ onSocket }, async (server) => {
    const inbox = await WebSocketInbox.open(socketUrl(server.baseUrl), {}, {
      timeoutMs: 5_000,
      maxQueuedChars: 1_000,
    });
    try {
      await sleep(100, AbortSignal.timeout(1_000));
      inbox.send("one");
      assert.equal(await inbox.next(5_000), "answer 1");
      inbox.settle();
      await sleep(100, AbortSignal.timeout(1_000));
      inbox.send("two");
      assert.equal(await inbox.next(5_000), "answer 2");
      inbox.settle();
      await until(() => server.counts.closed === 1, "tern to close the flooded socket");
      assert.equal(inbox.closed, true);
      assert.equal(inbox.broken, true);
    } finally {
      inbox.close();
    }
  });
});
