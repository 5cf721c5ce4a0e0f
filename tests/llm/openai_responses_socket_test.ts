import assert from "node:assert/strict";
import type { Message } from "../../src/core/messages.ts";
import {
  createOpenAiResponsesProvider,
  type ResponsesTransport,
  usesWebSocket,
} from "../../src/llm/openai_responses.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { createWireProvider } from "../../src/llm/setup.ts";
import type { ModelRequest, Provider, StreamEvent } from "../../src/llm/types.ts";
import {
  type ScriptedServer,
  type ScriptedServerOptions,
  withScriptedServer,
} from "../support/scripted_server.ts";
import { done, lastError } from "../support/stream_events.ts";
import { sleep } from "../support/abortable_wait.ts";
import { SOCKET_REQUEST, streamOverSocket, withSocketPool } from "../support/socket_pool.ts";

const KEY = "sk-live-SECRET-0123456789abcdef";
const READ = {
  name: "read",
  description: "Reads a file",
  parameters: { type: "object", properties: { path: { type: "string" } } },
};
const CALL = (path: string): ScriptedReply => ({
  toolCalls: [{ name: "read", arguments: JSON.stringify({ path }) }],
});

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  assert.equal(JSON.stringify(events).includes(KEY), false, "the API key leaked into an event");
  return events;
}

/**
 * Plays a conversation of `rounds` model calls like the loop does: each answer and a tool
 * result for each call go into the next request. The first round goes over HTTP while the
 * socket opens; unless `warm` is false, the second waits until the server has the socket.
 */
async function converse(
  provider: Provider,
  rounds: number,
  server: ScriptedServer,
  { between = () => {}, warm = true }: { between?: (round: number) => void; warm?: boolean } = {},
): Promise<StreamEvent[][]> {
  const messages: Message[] = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Read the files" },
  ];
  const all: StreamEvent[][] = [];
  for (let round = 0; round < rounds; round++) {
    if (round === 1 && warm) await until(() => server.sockets.opened > 0, "the socket to open");
    between(round);
    const request: ModelRequest = { model: "gpt-test", messages: [...messages], tools: [READ] };
    request.cacheKey = "tern-session-1";
    const events = await collect(provider.stream(request));
    all.push(events);
    const message = done(events).message;
    messages.push(message);
    for (const call of message.toolCalls ?? []) {
      messages.push({ role: "tool", toolCallId: call.id, name: call.name, content: `ok ${round}` });
    }
  }
  return all;
}

async function withSocketProvider(
  script: ScriptedReply[] | ((request: ModelRequest, index: number) => ScriptedReply),
  body: (provider: Provider, server: ScriptedServer) => Promise<void>,
  options: { transport?: ResponsesTransport; server?: ScriptedServerOptions } = {},
): Promise<void> {
  await withScriptedServer(script, async (server) => {
    const provider = createOpenAiResponsesProvider({
      baseUrl: server.baseUrl,
      apiKey: KEY,
      transport: options.transport ?? "websocket",
    });
    try {
      await body(provider, server);
    } finally {
      await provider.close?.();
    }
  }, options.server);
}

/** Waits until `condition` holds: real events (a socket closing), no fixed sleep. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_000 && !condition(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.ok(condition(), `timed out waiting for ${what}`);
}

Deno.test("createOpenAiResponsesProvider() over websocket sends the first round over HTTP, then each round's new input only, after previous_response_id", async () => {
  await withSocketProvider(
    [CALL("a.ts"), CALL("b.ts"), CALL("c.ts"), { text: "done" }],
    async (provider, server) => {
      await converse(provider, 4, server);
      assert.deepEqual(server.requests.map((r) => r.transport), [
        undefined,
        "websocket",
        "websocket",
        "websocket",
      ]);
      assert.equal(server.sockets.opened, 1, "one socket for the whole conversation");
      const [, first, second, third] = server.requests.map((r) => r.body);
      assert.equal(first.type, "response.create");
      assert.equal(first.previous_response_id, undefined, "the socket holds nothing yet");
      assert.equal((first.input as unknown[]).length, 3);
      assert.equal("stream" in first, false, "stream is HTTP-only");
      assert.equal(first.store, false);
      assert.equal(first.instructions, "You are terse.");
      assert.equal(second.previous_response_id, "resp_1");
      assert.deepEqual(second.input, [{
        type: "function_call_output",
        call_id: "call_1_0",
        output: "ok 1",
      }]);
      assert.equal(second.instructions, "You are terse.", "instructions are not carried forward");
      assert.equal(third.previous_response_id, "resp_2");
      assert.equal((third.input as unknown[]).length, 1);
      // The server's view of the last round is the whole conversation.
      const seen = server.requests[3].modelRequest.messages.map((m) => m.role);
      assert.deepEqual(seen, [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
      ]);
      assert.equal(server.requests[1].headers.authorization, `Bearer ${KEY}`);
    },
  );
});

Deno.test("createOpenAiResponsesProvider() over websocket sends the whole conversation when it no longer continues the chain", async () => {
  await withSocketProvider(
    [CALL("a.ts"), CALL("b.ts"), { text: "one" }, { text: "two" }],
    async (provider, server) => {
      await converse(provider, 3, server);
      // A rewritten history (compaction, rewind) is not what the socket's response holds.
      const request: ModelRequest = {
        model: "gpt-test",
        messages: [{ role: "user", content: "Summary so far; go on" }],
        tools: [],
        cacheKey: "tern-session-1",
      };
      done(await collect(provider.stream(request)));
      const last = server.requests[3];
      assert.equal(last.transport, "websocket");
      assert.equal(last.body.previous_response_id, undefined);
      assert.equal((last.body.input as unknown[]).length, 1);
      assert.equal(server.sockets.opened, 1);
    },
  );
});

Deno.test("createOpenAiResponsesProvider() over websocket falls back to HTTP with the whole conversation when the socket drops mid-stream", async () => {
  const script = (_request: ModelRequest, index: number): ScriptedReply =>
    index === 2
      ? { text: "partial answer", fault: "drop_mid_stream" }
      : index < 2
      ? CALL(`${index}.ts`)
      : { text: "whole answer" };
  await withSocketProvider(script, async (provider, server) => {
    const [, , third] = await converse(provider, 3, server);
    assert.equal(done(third).message.content, "whole answer");
    assert.ok(third.some((e) => e.type === "retry"), "the streamed part is declared void");
    const [, b, c, d] = server.requests;
    assert.equal(b.transport, "websocket");
    assert.equal(c.transport, "websocket");
    assert.equal(c.body.previous_response_id, "resp_1");
    assert.equal(d.transport, undefined, "the same round went over HTTP");
    assert.equal(d.body.previous_response_id, undefined);
    assert.deepEqual(d.modelRequest.messages.map((m) => m.role), [
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
    ]);
    await until(() => server.sockets.open === 0, "the dropped socket to close");
  });
});

Deno.test("createOpenAiResponsesProvider() over websocket resends the whole conversation on the socket when previous_response_id is not found", async () => {
  await withSocketProvider(
    [CALL("a.ts"), CALL("b.ts"), { text: "answer" }],
    async (provider, server) => {
      const [, , third] = await converse(provider, 3, server, {
        between: (round) => {
          if (round === 2) server.forgetResponses();
        },
      });
      assert.equal(done(third).message.content, "answer");
      assert.equal(third.some((e) => e.type === "retry"), false);
      // The incremental round was refused (no request recorded); the whole one followed.
      assert.equal(server.requests.length, 3);
      const last = server.requests[2];
      assert.equal(last.transport, "websocket");
      assert.equal(last.body.previous_response_id, undefined);
      assert.deepEqual(last.modelRequest.messages.map((m) => m.role), [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
      ]);
      assert.equal(server.sockets.opened, 1);
    },
  );
});

Deno.test("createOpenAiResponsesProvider() over websocket uses HTTP when the server refuses the handshake", async () => {
  await withSocketProvider(
    [CALL("a.ts"), CALL("b.ts"), { text: "answer" }],
    async (provider, server) => {
      const [, , third] = await converse(provider, 3, server, { warm: false });
      assert.equal(done(third).message.content, "answer");
      assert.ok(server.requests.every((r) => r.transport === undefined));
      assert.equal(server.requests[2].body.stream, true);
      assert.equal(server.sockets.opened, 0);
    },
    { server: { webSocket: false } },
  );
});

Deno.test("createOpenAiResponsesProvider() over websocket sends a request without a conversation key over HTTP and opens no socket", async () => {
  await withSocketProvider([{ text: "review" }, { text: "again" }], async (provider, server) => {
    const request: ModelRequest = {
      model: "gpt-test",
      messages: [{ role: "user", content: "x" }],
      tools: [],
    };
    done(await collect(provider.stream(request)));
    done(await collect(provider.stream(request)));
    assert.deepEqual(server.requests.map((r) => r.transport), [undefined, undefined]);
    assert.equal(server.sockets.opened, 0);
  });
});

Deno.test("createOpenAiResponsesProvider() over websocket answers a second request while the socket is busy over HTTP", async () => {
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  const { promise: firstArrived, resolve: arrived } = Promise.withResolvers<void>();
  let replies = 0;
  await withSocketProvider(
    [{ text: "opening" }, { text: "first" }, { text: "second" }],
    async (provider, server) => {
      const request: ModelRequest = {
        model: "gpt-test",
        messages: [{ role: "user", content: "x" }],
        tools: [],
        cacheKey: "k",
      };
      done(await collect(provider.stream(request)));
      await until(() => server.sockets.opened > 0, "the socket to open");
      const first = collect(provider.stream(request));
      await firstArrived;
      const second = await collect(provider.stream(request));
      release();
      assert.equal(done(second).message.content, "second");
      assert.equal(done(await first).message.content, "first");
      assert.deepEqual(server.requests.map((r) => r.transport), [
        undefined,
        "websocket",
        undefined,
      ]);
    },
    {
      server: {
        beforeReply: () => {
          if (replies++ !== 1) return Promise.resolve();
          arrived();
          return held;
        },
      },
    },
  );
});

Deno.test("createOpenAiResponsesProvider() over websocket redacts the key from an error event on the socket", async () => {
  const script = (_request: ModelRequest, index: number): ScriptedReply => {
    if (index === 0) return { text: "opening" };
    throw new Error(`bad key ${KEY}`);
  };
  await withSocketProvider(script, async (provider, server) => {
    const request: ModelRequest = {
      model: "gpt-test",
      messages: [{ role: "user", content: "x" }],
      tools: [],
      cacheKey: "k",
    };
    done(await collect(provider.stream(request)));
    await until(() => server.sockets.opened > 0, "the socket to open");
    const error = lastError(await collect(provider.stream(request)));
    assert.equal(server.requests[1].transport, "websocket");
    assert.match(error.message, /bad key/);
  });
});

Deno.test("createOpenAiResponsesProvider() over websocket closes the socket after an aborted round and starts the next one whole", async () => {
  await withSocketProvider(
    [CALL("a.ts"), CALL("b.ts"), { fault: "hang" }, { text: "after" }],
    async (provider, server) => {
      await converse(provider, 2, server);
      const controller = new AbortController();
      const request: ModelRequest = {
        model: "gpt-test",
        messages: [{ role: "user", content: "Read the files" }],
        tools: [],
        cacheKey: "tern-session-1",
      };
      const events: StreamEvent[] = [];
      const hung = (async () => {
        for await (const event of provider.stream(request, controller.signal)) events.push(event);
      })();
      await until(() => server.requests.length === 3, "the hanging round to arrive");
      controller.abort();
      await hung;
      assert.equal(lastError(events).kind, "aborted");
      await until(() => server.sockets.open === 0, "the socket of the aborted round to close");
      done(await collect(provider.stream(request)));
      assert.equal(server.sockets.opened, 2);
      assert.equal(server.requests[3].transport, "websocket");
      assert.equal(server.requests[3].body.previous_response_id, undefined);
    },
  );
});

Deno.test("createWireProvider() closes the Responses sockets on close()", async () => {
  await withScriptedServer([{ text: "hi" }], async (server) => {
    const provider = createWireProvider({
      name: "openai",
      api: "openai-responses",
      baseUrl: server.baseUrl,
      apiKey: KEY,
      keyVariables: [],
      keyRequired: false,
      transport: "websocket",
    }, { requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 });
    const request: ModelRequest = {
      model: "gpt-test",
      messages: [{ role: "user", content: "x" }],
      tools: [],
      cacheKey: "k",
    };
    done(await collect(provider.stream(request)));
    await until(() => server.sockets.open === 1, "the socket to open");
    await provider.close?.();
    await until(() => server.sockets.open === 0, "the socket to close");
  });
});

Deno.test("createOpenAiResponsesProvider() with the default transport never opens a socket", async () => {
  await withScriptedServer([{ text: "hi" }], async (server) => {
    const provider = createOpenAiResponsesProvider({ baseUrl: server.baseUrl, apiKey: KEY });
    const request: ModelRequest = {
      model: "gpt-test",
      messages: [{ role: "user", content: "x" }],
      tools: [],
      cacheKey: "k",
    };
    done(await collect(provider.stream(request)));
    assert.equal(server.sockets.opened, 0);
  });
});

Deno.test("ResponsesSocketPool.stream() ends an answer that never finishes at the request timeout, without HTTP", async () => {
  const closing = new AbortController();
  // Each response.create is answered with text deltas every 20 ms, and never completed.
  const accept = (socket: WebSocket) =>
    socket.addEventListener("message", async () => {
      while (socket.readyState === WebSocket.OPEN && !closing.signal.aborted) {
        socket.send(JSON.stringify({ type: "response.output_text.delta", delta: "la" }));
        await sleep(20, closing.signal);
      }
    });
  const timeouts = { apiKey: KEY, requestTimeoutMs: 300, idleTimeoutMs: 5000 };
  let overHttp = 0;
  await withSocketPool(accept, timeouts, async (pool) => {
    try {
      const request: ModelRequest = { ...SOCKET_REQUEST, model: "gpt-test" };
      // Far above the timeout: reached only when the request timeout did not end the answer.
      const events = await streamOverSocket(pool, async function* () {
        overHttp++;
        yield* [];
      }, { request, signal: AbortSignal.timeout(20_000) });
      assert.ok(events.some((event) => event.type === "text_delta"), "expected some text first");
      assert.deepEqual(events.at(-1), {
        type: "error",
        kind: "client",
        message: "Model API did not finish its answer within 300 ms (the request timeout): " +
          "raise requestTimeoutMs or TERN_REQUEST_TIMEOUT_MS to allow longer calls",
        retryable: true,
        longTimeout: true,
      });
      assert.equal(overHttp, 0, "a slow answer is not sent again over HTTP");
    } finally {
      closing.abort();
    }
  });
});

Deno.test("usesWebSocket() picks the socket under auto only at OpenAI's own API", () => {
  assert.equal(usesWebSocket("auto", "https://api.openai.com/v1"), true);
  assert.equal(usesWebSocket("auto", "http://127.0.0.1:8080/v1"), false);
  assert.equal(usesWebSocket(undefined, "https://api.openai.com/v1"), false);
  assert.equal(usesWebSocket("sse", "https://api.openai.com/v1"), false);
  assert.equal(usesWebSocket("websocket", "http://127.0.0.1:8080/v1"), true);
});
