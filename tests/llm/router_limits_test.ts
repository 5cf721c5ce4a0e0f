/**
 * What the router bounds besides retries: how many tool calls one reply may make, and which
 * timeouts it does not retry. Real wire providers against servers on 127.0.0.1.
 */
import assert from "node:assert/strict";
import type { ApiStyle } from "../../src/llm/model_info.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { createRouter } from "../../src/llm/router.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { Provider } from "../../src/llm/types.ts";
import { sleep } from "../support/abortable_wait.ts";
import {
  collect,
  last,
  ofType,
  request,
  target,
  wireTarget,
  withServers,
} from "./_router_helpers.ts";

const FAST = { retryBaseMs: 2, random: () => 0 };

/** A reply of `count` parallel `list` calls. */
function calls(count: number): ScriptedReply {
  return {
    toolCalls: Array.from(
      { length: count },
      (_, i) => ({ id: `c${i}`, name: "list", arguments: "{}" }),
    ),
  };
}

Deno.test("createRouter() takes a reply of 128 tool calls", async () => {
  await withServers([[calls(128)]], async ([s]) => {
    const router = createRouter({ targets: [wireTarget(s, "main", "m1")], ...FAST });
    const done = last(await collect(router.stream(request("m1"))), "done");
    assert.equal(done.message.toolCalls?.length, 128);
  });
});

for (const api of ["openai", "openai-responses", "anthropic"] as ApiStyle[]) {
  Deno.test(`createRouter() ends a reply of 1,000 tool calls at the 129th, not retried (${api})`, async () => {
    await withServers([[calls(1_000), { text: "never" }]], async ([s]) => {
      const router = createRouter({ targets: [wireTarget(s, "main", "m1", { api })], ...FAST });
      const events = await collect(router.stream(request("m1")));
      const error = last(events, "error");
      assert.match(error.message, /more than 128 tool calls/);
      assert.notEqual(error.retryable, true);
      assert.equal(ofType(events, "retry").length, 0);
      assert.equal(s.requests.length, 1);
      // The rest of the reply was not read: no call past the limit reached the consumer.
      const seen = new Set(ofType(events, "tool_call_delta").map((event) => event.index));
      assert.equal(seen.size, 128);
    });
  });
}

/** A server whose every answer is `respond(closing)`, counting the requests. */
async function withServer(
  respond: (closing: AbortSignal) => Response | Promise<Response>,
  body: (baseUrl: string, requests: () => number) => Promise<void>,
): Promise<void> {
  const closing = new AbortController();
  let requests = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      requests++;
      await request.body?.cancel();
      return await respond(closing.signal);
    },
  );
  try {
    await body(`http://127.0.0.1:${server.addr.port}/v1`, () => requests);
  } finally {
    closing.abort();
    await server.shutdown();
  }
}

/** An SSE body that sends `chunk` every 20 ms until the reader goes or the server closes. */
function endless(chunk: string, closing: AbortSignal): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await sleep(20, closing);
      if (closing.aborted) controller.close();
      else controller.enqueue(encoder.encode(chunk));
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

function chatProvider(
  baseUrl: string,
  timeouts: { requestTimeoutMs: number; idleTimeoutMs: number },
): Provider {
  return createOpenAiChatProvider({ baseUrl, apiKey: "sk-test-0123456789", ...timeouts });
}

Deno.test("createRouter() does not retry a stream without content past its limit, and falls back", async () => {
  await withServer((closing) => endless(": ping\n\n", closing), async (baseUrl, requests) => {
    await withServers([[{ text: "from the backup" }]], async ([backup]) => {
      // A keep-alive every 20 ms: the idle timeout leaves room for a loaded machine's late timers.
      const main = chatProvider(baseUrl, { requestTimeoutMs: 60_000, idleTimeoutMs: 250 });
      const router = createRouter({
        targets: [target(main, "main", "m1"), wireTarget(backup, "backup", "m2")],
        ...FAST,
      });
      const events = await collect(router.stream(request("m1")));
      assert.equal(requests(), 1);
      assert.equal(ofType(events, "retry").length, 0);
      const [fallback] = ofType(events, "fallback");
      assert.match(fallback.reason, /sent no content for 1250 ms.*\(not retried\)/);
      assert.equal(last(events, "done").message.content, "from the backup");
    });
  });
});

Deno.test("createRouter() does not retry a request timeout", async () => {
  const delta = `data: ${
    JSON.stringify({ choices: [{ index: 0, delta: { content: "la" } }] })
  }\n\n`;
  await withServer((closing) => endless(delta, closing), async (baseUrl, requests) => {
    const main = chatProvider(baseUrl, { requestTimeoutMs: 400, idleTimeoutMs: 5_000 });
    const router = createRouter({ targets: [target(main, "main", "m1")], ...FAST });
    const events = await collect(router.stream(request("m1")));
    assert.equal(requests(), 1);
    assert.equal(ofType(events, "retry").length, 0);
    assert.match(
      last(events, "error").message,
      /within 400 ms \(the request timeout\).*\(not retried\)/,
    );
  });
});

Deno.test("createRouter() retries a server that sends no headers within the idle timeout", async () => {
  const never = (closing: AbortSignal) =>
    new Promise<Response>((resolve) => {
      closing.addEventListener("abort", () => resolve(new Response(null, { status: 503 })));
    });
  await withServer(never, async (baseUrl, requests) => {
    const main = chatProvider(baseUrl, { requestTimeoutMs: 60_000, idleTimeoutMs: 100 });
    const router = createRouter({ targets: [target(main, "main", "m1")], maxRetries: 2, ...FAST });
    const events = await collect(router.stream(request("m1")));
    assert.equal(ofType(events, "retry").length, 2);
    assert.equal(requests(), 3);
    assert.match(
      last(events, "error").message,
      /did not respond within 100 ms \(the idle timeout\).*gave up after 3 attempts/,
    );
  });
});
