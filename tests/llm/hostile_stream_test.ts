/**
 * A hostile or broken server's stream: keep-alives that go on after a complete message, events
 * without data, WebSocket frames that are not text events, a WebSocket server that never
 * answers the close frame, an error page of unclosed tags, and tool-call pieces that cost the
 * square of their number (an id grown a character a piece, pieces after a megabyte of
 * arguments). Real providers against servers on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { htmlText, httpStreamConfig } from "../../src/llm/http_stream.ts";
import { ResponsesSocketPool, socketUrl } from "../../src/llm/openai_responses_socket.ts";
import type { ResolvedProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { streamFrom, withRawServer } from "../support/raw_model_server.ts";
import { streamOverSocket, withSocketPool } from "../support/socket_pool.ts";

const encoder = new TextEncoder();
const IDLE_MS = 400;
/** Far above every limit here: reached only when a limit failed to end the read. */
const GUARD_MS = 20_000;

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;

/** A complete message in each API, without its end marker (`[DONE]`, `message_stop`). */
const COMPLETE: Record<"openai" | "anthropic", string> = {
  openai: data({ choices: [{ delta: { content: "hi" }, finish_reason: "stop" }] }) +
    data({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }),
  anthropic: data({ type: "message_start", message: { usage: { input_tokens: 3 } } }) +
    data({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
    data({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hi" } }) +
    data({
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 1 },
    }),
};

/** A body that sends `first`, then a keep-alive comment every 50 ms until `closing` fires. */
function keptAlive(first: string, closing: AbortSignal): ReadableStream<Uint8Array> {
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (started) await new Promise((resolve) => setTimeout(resolve, 50));
      if (closing.aborted) return controller.close();
      controller.enqueue(encoder.encode(started ? ": ping\n\n" : first));
      started = true;
    },
  });
}

const stream = (body: ReadableStream<Uint8Array> | string) =>
  new Response(body, { headers: { "content-type": "text/event-stream" } });

function lastOf(events: StreamEvent[]): StreamEvent | undefined {
  return events.at(-1);
}

for (const api of ["openai", "anthropic"] as const) {
  Deno.test(`${api} stream: keep-alives after a complete message end the call with it within an idle timeout`, async () => {
    await withRawServer((closing) => stream(keptAlive(COMPLETE[api], closing)), async (url) => {
      const started = performance.now();
      const events = await streamFrom(
        api,
        url,
        { requestTimeoutMs: GUARD_MS, idleTimeoutMs: IDLE_MS },
        GUARD_MS,
      );
      const elapsed = performance.now() - started;
      const last = lastOf(events);
      assert.equal(last?.type, "done", JSON.stringify(last));
      assert.equal(last.type === "done" && last.message.content, "hi");
      assert.equal(last.type === "done" && last.usage?.outputTokens, 1);
      // Before the progress timeout (five idle timeouts) would have ended it.
      assert.ok(elapsed < 4 * IDLE_MS, `waited ${Math.round(elapsed)} ms`);
    });
  });
}

const EMPTY_EVENTS = "data:\n\ndata: \n\n";
const ANSWERS: Record<ResolvedProvider["api"], string> = {
  openai: COMPLETE.openai + "data: [DONE]\n\n",
  anthropic: COMPLETE.anthropic + data({ type: "message_stop" }),
  "openai-responses": data({ type: "response.output_text.delta", delta: "hi" }) +
    data({ type: "response.completed", response: { id: "r" } }),
};

for (const api of ["openai", "anthropic", "openai-responses"] as const) {
  Deno.test(`${api} stream: an event without data is a keep-alive, not an unreadable event`, async () => {
    const [first, rest] = [ANSWERS[api].slice(0, 20), ANSWERS[api].slice(20)];
    // At the start, between events, and split inside one (the server's own chunks).
    const body = EMPTY_EVENTS + first + rest.replace("\n\n", `\n\n${EMPTY_EVENTS}`) +
      EMPTY_EVENTS;
    await withRawServer(() => stream(body), async (url) => {
      const events = await streamFrom(
        api,
        url,
        { requestTimeoutMs: GUARD_MS, idleTimeoutMs: GUARD_MS },
        GUARD_MS,
      );
      const last = lastOf(events);
      assert.equal(last?.type, "done", JSON.stringify(last));
      assert.equal(last.type === "done" && last.message.content, "hi");
    });
  });
}

Deno.test("ResponsesSocketPool.stream() reads past binary and blank frames, which are no events", async () => {
  const accept = (socket: WebSocket) => {
    socket.addEventListener("message", () => {
      socket.send(JSON.stringify({ type: "response.created", response: { id: "r1" } }));
      socket.send(new Uint8Array([0x7b, 0x7d]));
      socket.send(JSON.stringify({ type: "response.output_text.delta", delta: "hi" }));
      socket.send(" ");
      socket.send(JSON.stringify({ type: "response.completed", response: { id: "r1" } }));
    });
  };
  await withSocketPool(
    accept,
    { requestTimeoutMs: GUARD_MS, idleTimeoutMs: 5_000 },
    async (pool) => {
      const events = await streamOverSocket(pool, async function* () {
        yield { type: "error", kind: "client", message: "over http" };
      }, { signal: AbortSignal.timeout(GUARD_MS) });
      const last = lastOf(events);
      assert.equal(last?.type, "done", JSON.stringify(events));
      assert.equal(last.type === "done" && last.message.content, "hi");
    },
  );
});

/** A text frame as a server sends it (unmasked), of at most 65,535 bytes. */
function textFrame(text: string): Uint8Array {
  const payload = encoder.encode(text);
  const length = payload.length < 126
    ? [payload.length]
    : [126, payload.length >> 8, payload.length & 255];
  return new Uint8Array([0x81, ...length, ...payload]);
}

/**
 * A WebSocket server on 127.0.0.1 that answers the first request with `frames` and then reads
 * and ignores everything, a close frame included. `cut` resolves when the client cut the TCP
 * connection.
 */
function deafServer(frames: string[]): { url: string; cut: Promise<void>; stop(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { promise: cut, resolve } = Promise.withResolvers<void>();
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      const buffer = new Uint8Array(1 << 16);
      const n = await conn.read(buffer);
      const request = new TextDecoder().decode(buffer.subarray(0, n ?? 0));
      const key = /sec-websocket-key: *(\S+)/i.exec(request)?.[1] ?? "";
      const digest = await crypto.subtle.digest(
        "SHA-1",
        encoder.encode(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`),
      );
      const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
      await conn.write(encoder.encode(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
      ));
      let answered = false;
      for (;;) {
        const read = await conn.read(buffer).catch(() => null);
        if (read === null) break;
        if (answered) continue;
        answered = true;
        for (const frame of frames) await conn.write(textFrame(frame));
      }
      resolve();
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/v1`,
    cut,
    stop() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
    },
  };
}

Deno.test("ResponsesSocketPool.close() cuts a connection whose server never answers the close frame", async () => {
  const server = deafServer([
    JSON.stringify({ type: "response.created", response: { id: "r1" } }),
    JSON.stringify({ type: "response.output_text.delta", delta: "hi" }),
    JSON.stringify({ type: "response.completed", response: { id: "r1" } }),
  ]);
  const http = httpStreamConfig(
    { baseUrl: server.url, requestTimeoutMs: GUARD_MS, idleTimeoutMs: 5_000 },
    "/responses",
    {},
  );
  const pool = new ResponsesSocketPool({ url: socketUrl(server.url), headers: {}, http });
  try {
    const events = await streamOverSocket(pool, async function* () {
      yield { type: "error", kind: "client", message: "over http" };
    }, { signal: AbortSignal.timeout(GUARD_MS) });
    assert.equal(lastOf(events)?.type, "done", JSON.stringify(events));
    const started = performance.now();
    await pool.close();
    // Until the connection goes, it holds the process open at its exit.
    await server.cut;
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 10_000, `the connection stayed ${Math.round(elapsed)} ms`);
  } finally {
    server.stop();
  }
});

Deno.test("createWireProvider() reads an error page of unclosed tags", async () => {
  // What tern reads of an error body (16,000 characters), all `<` without a `>`.
  const page = "<".repeat(64_000);
  await withRawServer(
    () => new Response(page, { status: 502, headers: { "content-type": "text/html" } }),
    async (url) => {
      const timeouts = { requestTimeoutMs: GUARD_MS, idleTimeoutMs: GUARD_MS };
      const last = lastOf(await streamFrom("openai", url, timeouts, GUARD_MS));
      assert.equal(last?.type, "error");
      assert.match(last.type === "error" ? last.message : "", /^HTTP 502 from model API: <<</);
    },
  );
});

Deno.test("htmlText() reads a page of unclosed tags, comments and scripts in linear time", () => {
  // Each `<` searched to the end of the page cost the square of its length: 16,000 of them
  // took 0.4 to 0.6 s, so 128,000 took half a minute. A hang guard, not a speed target: one
  // pass takes milliseconds.
  for (const open of ["<", "<!--", "<script"]) {
    const page = `text ${"x ".repeat(10)}${open.repeat(Math.floor(128_000 / open.length))}`;
    const started = performance.now();
    const text = htmlText(page);
    const elapsed = performance.now() - started;
    assert.ok(text.startsWith("text x"), text.slice(0, 40));
    assert.ok(elapsed < 5_000, `${open}: took ${Math.round(elapsed)} ms`);
  }
});

/** A Chat answer of one payload holding `fragments` as its tool calls. */
const chatCalls = (fragments: unknown[]) =>
  data({ choices: [{ delta: { tool_calls: fragments } }] }) +
  data({ choices: [{ delta: {}, finish_reason: "tool_calls" }] }) + "data: [DONE]\n\n";

async function timedChat(body: string): Promise<{ last: StreamEvent | undefined; ms: number }> {
  let result: { last: StreamEvent | undefined; ms: number } | undefined;
  await withRawServer(() => stream(body), async (url) => {
    const timeouts = { requestTimeoutMs: 120_000, idleTimeoutMs: 120_000 };
    const started = performance.now();
    const events = await streamFrom("openai", url, timeouts, 180_000);
    result = { last: lastOf(events), ms: performance.now() - started };
  });
  return result!;
}

Deno.test("Chat stream: a tool call id grown a character a piece ends with a clear error", async () => {
  // Each piece names another id, which joins the call's id (before its arguments an id may come
  // in pieces): a 50,000-character id whose every length was kept (a million pieces ran tern
  // out of memory).
  const fragments = [
    { index: 0, id: "a", function: { name: "bash" } },
    ...Array.from({ length: 10_000 }, (_, i) => ({ index: 0, id: `b${i}` })),
  ];
  const { last, ms } = await timedChat(chatCalls(fragments));
  assert.equal(last?.type, "error", JSON.stringify(last).slice(0, 200));
  assert.match(
    last.type === "error" ? last.message : "",
    /tool call id longer than 256 characters/,
  );
  assert.equal(last.type === "error" && last.retryable, undefined);
  assert.ok(ms < 3_000, `took ${Math.round(ms)} ms`);
});

Deno.test("Chat stream: thousands of pieces after a megabyte of arguments merge in linear time", async () => {
  // Arguments that end like an object and are not one, then pieces that might start another
  // call: each parsed the whole megabyte again (3,000 pieces, 10 s with the process stalled).
  const fragments = [
    { index: 0, id: "a", function: { name: "bash", arguments: `{"a":"${"x".repeat(1 << 20)}"}}` } },
    ...Array.from(
      { length: 3_000 },
      () => ({ index: 0, function: { name: "bash", arguments: "{}" } }),
    ),
  ];
  const { last, ms } = await timedChat(chatCalls(fragments));
  assert.equal(last?.type, "done", JSON.stringify(last).slice(0, 200));
  assert.equal(last.type === "done" && last.message.toolCalls?.length, 1);
  assert.ok(ms < 3_000, `took ${Math.round(ms)} ms`);
});
