/**
 * A hostile model server that echoes the key it was sent back inside its stream: in an error's
 * code or type, in a payload that is not JSON, in a field of the wrong type, in an `error:`
 * line, in the answer's text. No event a provider yields may carry the key. Real providers
 * against servers on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { discoverModels } from "../../src/llm/discovery.ts";
import { createWireProvider, type ResolvedProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { streamOverSocket, withSocketPool } from "../support/socket_pool.ts";

const KEY =
  "sk-live-SECRET-0123456789abcdefghijklmnopqrstuvwxyz-0123456789abcdefghijklmnopqrstuvwxyz";

/** The events of one request to a server that answers with `sse(key)`, the key it received. */
async function echoed(
  api: ResolvedProvider["api"],
  sse: (key: string) => string,
): Promise<StreamEvent[]> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    const key = req.headers.get("x-api-key") ??
      req.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
    return new Response(sse(key), { headers: { "content-type": "text/event-stream" } });
  });
  try {
    const wire = createWireProvider(
      {
        name: api,
        api,
        baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
        apiKey: KEY,
        keyVariables: [],
        keyRequired: true,
      },
      { requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 },
    );
    const request = { model: "m", messages: [{ role: "user" as const, content: "hi" }], tools: [] };
    const events: StreamEvent[] = [];
    for await (const event of wire.stream(request, AbortSignal.timeout(20_000))) {
      events.push(event);
    }
    return events;
  } finally {
    await server.shutdown();
  }
}

/** Fails when any event holds the key, or its first 24 characters (a clipped quote of it). */
function assertNoKey(events: StreamEvent[]): void {
  const text = JSON.stringify(events);
  assert.equal(text.includes(KEY.slice(0, 24)), false, `the key leaked: ${text.slice(0, 400)}`);
  assert.equal(events.filter((e) => e.type === "done" || e.type === "error").length, 1);
}

const CHAT_STOP = 'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

Deno.test("Chat stream: an error whose code echoes the key does not show it", async () => {
  const events = await echoed("openai", (key) => `data: {"error":{"code":"${key}"}}\n\n`);
  assert.equal(events.at(-1)?.type, "error");
  assertNoKey(events);
});

Deno.test("Chat stream: an error whose type is huge is clipped", async () => {
  const events = await echoed(
    "openai",
    () => `data: {"error":{"type":"${"x".repeat(100_000)}"}}\n\n`,
  );
  const last = events.at(-1);
  assert.equal(last?.type, "error");
  assert.ok(JSON.stringify(last).length < 2_000, "the error text was not clipped");
});

Deno.test("Chat stream: a payload that is not JSON and starts with the key does not show it", async () => {
  assertNoKey(await echoed("openai", (key) => `data: ${key} is not valid\n\n`));
});

Deno.test("Chat stream: a tool call id of the wrong type holding the key does not show it", async () => {
  assertNoKey(
    await echoed(
      "openai",
      (key) => `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":{"k":"${key}"}}]}}]}\n\n`,
    ),
  );
});

Deno.test("Chat stream: an error: line whose code echoes the key does not show it", async () => {
  assertNoKey(await echoed("openai", (key) => `error: {"code":"${key}"}\n\ndata: [DONE]\n\n`));
});

Deno.test("Chat stream: answer text that echoes the key does not carry it", async () => {
  const events = await echoed(
    "openai",
    (key) => `data: {"choices":[{"delta":{"content":"your key is ${key}"}}]}\n\n${CHAT_STOP}`,
  );
  assert.equal(events.at(-1)?.type, "done");
  assertNoKey(events);
});

Deno.test("Responses stream: a failure whose code echoes the key does not show it", async () => {
  assertNoKey(
    await echoed(
      "openai-responses",
      (key) => `data: {"type":"response.failed","response":{"error":{"code":"${key}"}}}\n\n`,
    ),
  );
});

Deno.test("Anthropic stream: a payload that is not JSON and starts with the key does not show it", async () => {
  assertNoKey(await echoed("anthropic", (key) => `event: x\ndata: ${key}\n\n`));
});

Deno.test("ResponsesSocketPool.stream(): a failure whose code echoes the key does not show it", async () => {
  const accept = (socket: WebSocket) =>
    socket.addEventListener("message", () => {
      socket.send(JSON.stringify({ type: "response.output_text.delta", delta: `key ${KEY}` }));
      socket.send(JSON.stringify({ type: "response.failed", response: { error: { code: KEY } } }));
    });
  const timeouts = { apiKey: KEY, requestTimeoutMs: 10_000, idleTimeoutMs: 5_000 };
  await withSocketPool(accept, timeouts, async (pool) => {
    const events = await streamOverSocket(pool, async function* () {
      yield { type: "error", kind: "client", message: "not over http" };
    });
    assert.equal(events.at(-1)?.type, "error");
    assert.notEqual((events.at(-1) as { message: string }).message, "not over http");
    assertNoKey(events);
  });
});

Deno.test("createWireProvider(): a credential in a configured header is redacted like the key", async () => {
  const token = "gw-SECRET-abcdefghijklmnopqrstuvwxyz0123456789";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    const sent = req.headers.get("cf-aig-authorization") ?? "";
    if (req.headers.get("x-echo") === "status") {
      return Response.json({ error: { message: `rejected ${sent}` } }, { status: 401 });
    }
    return new Response(`data: {"error":{"code":"${sent}"}}\n\n`, {
      headers: { "content-type": "text/event-stream" },
    });
  });
  try {
    for (const echo of ["status", "stream"]) {
      const wire = createWireProvider(
        {
          name: "gateway",
          api: "openai",
          baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
          headers: { "cf-aig-authorization": `Bearer ${token}`, "x-echo": echo },
          keyVariables: [],
          keyRequired: false,
        },
        { requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 },
      );
      const request = {
        model: "m",
        messages: [{ role: "user" as const, content: "hi" }],
        tools: [],
      };
      const events: StreamEvent[] = [];
      for await (const event of wire.stream(request, AbortSignal.timeout(20_000))) {
        events.push(event);
      }
      assert.equal(events.at(-1)?.type, "error", echo);
      assert.equal(JSON.stringify(events).includes(token.slice(0, 16)), false, echo);
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("discoverModels(): a credential in a configured header is redacted from its error", async () => {
  const token = "gw-SECRET-abcdefghijklmnopqrstuvwxyz0123456789";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const sent = req.headers.get("helicone-auth") ?? "";
    return Response.json({ error: { message: `rejected ${sent}` } }, { status: 401 });
  });
  try {
    await assert.rejects(
      discoverModels({
        provider: "gateway",
        api: "openai",
        baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
        headers: { "Helicone-Auth": `Bearer ${token}` },
      }),
      (error: Error) => {
        assert.match(error.message, /HTTP 401: rejected (Bearer )?\[redacted\]$/);
        return true;
      },
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("discoverModels(): a model named after the key it was sent is not listed with the key", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const sent = req.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
    return Response.json({ data: [{ id: "good-model" }, { id: sent }, { id: `ft:${sent}` }] });
  });
  try {
    const entries = await discoverModels({
      provider: "openai",
      api: "openai",
      baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
      apiKey: KEY,
    });
    assert.equal(entries[0].id, "good-model");
    assert.equal(JSON.stringify(entries).includes(KEY.slice(0, 24)), false);
  } finally {
    await server.shutdown();
  }
});
