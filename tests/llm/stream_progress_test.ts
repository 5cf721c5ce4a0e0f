/**
 * A silent model server ends an attempt long before the request timeout: one that never sends
 * headers at the idle timeout, one that sends only keep-alives or empty events at five idle
 * timeouts. A model that thinks long between pieces of content, with keep-alives meanwhile,
 * is not cut off. The real wire providers against servers on 127.0.0.1.
 */
import assert from "node:assert/strict";
import type { ResolvedProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { sleep } from "../support/abortable_wait.ts";
import { streamFrom, withRawServer } from "../support/raw_model_server.ts";

type Api = ResolvedProvider["api"];

/** Far above any timeout set here: reached only when the call's own timeouts failed. */
const GUARD_MS = 20_000;
/** Far above any limit tested here: the request timeout must not be what ends a call. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * An SSE body that sends `next(i)` for i = 0, 1, … every `everyMs` until it returns undefined
 * (the body ends), the reader goes or the server closes.
 */
function sse(next: (i: number) => string | undefined, everyMs: number, closing: AbortSignal) {
  const encoder = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await sleep(everyMs, closing);
      const chunk = closing.aborted ? undefined : next(i++);
      if (chunk === undefined) controller.close();
      else controller.enqueue(encoder.encode(chunk));
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** Runs one request against `baseUrl` in `api` with `idleTimeoutMs`; its events and duration. */
async function call(
  api: Api,
  baseUrl: string,
  idleTimeoutMs: number,
): Promise<{ events: StreamEvent[]; ms: number }> {
  const started = performance.now();
  const timeouts = { requestTimeoutMs: REQUEST_TIMEOUT_MS, idleTimeoutMs };
  const events = await streamFrom(api, baseUrl, timeouts, GUARD_MS);
  return { events, ms: performance.now() - started };
}

const chatChunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const NO_PROGRESS = "Model API sent no content for 1000 ms, only keep-alives or empty events " +
  "(the limit is five idle timeouts): raise idleTimeoutMs or TERN_IDLE_TIMEOUT_MS to wait longer";

Deno.test("postForStream() ends the wait for headers at the idle timeout, retryable", async () => {
  const never = (closing: AbortSignal) =>
    new Promise<Response>((resolve) => {
      closing.addEventListener("abort", () => resolve(new Response(null, { status: 503 })));
    });
  await withRawServer(never, async (baseUrl) => {
    for (const api of ["openai", "openai-responses", "anthropic"] as const) {
      const { events, ms } = await call(api, baseUrl, 200);
      assert.deepEqual(events, [{
        type: "error",
        kind: "client",
        message: "Model API did not respond within 200 ms (the idle timeout): raise " +
          "idleTimeoutMs or TERN_IDLE_TIMEOUT_MS for a server that takes longer to start answering",
        retryable: true,
      }], api);
      assert.ok(ms < 15_000, `${api}: ${ms} ms`);
    }
  });
});

Deno.test("postForStream() ends a stream of only keep-alives at five idle timeouts, in any API", async () => {
  const keepAlives: [Api, string][] = [
    ["openai", ": ping\n\n"],
    ["openai", ": OPENROUTER PROCESSING\n\n"],
    ["openai-responses", ": keepalive\n\n"],
    ["anthropic", 'event: ping\ndata: {"type": "ping"}\n\n'],
  ];
  for (const [api, keepAlive] of keepAlives) {
    await withRawServer((closing) => sse(() => keepAlive, 20, closing), async (baseUrl) => {
      const { events, ms } = await call(api, baseUrl, 200);
      assert.deepEqual(events, [{
        type: "error",
        kind: "client",
        message: NO_PROGRESS,
        retryable: true,
        longTimeout: true,
      }], `${api} ${keepAlive}`);
      assert.ok(ms >= 1_000 && ms < 15_000, `${api}: ${ms} ms`);
    });
  }
});

Deno.test("postForStream() ends a stream of empty deltas at five idle timeouts", async () => {
  const empty = (i: number) =>
    i === 0 ? chatChunk({ role: "assistant", content: "" }) : chatChunk({ content: "" });
  await withRawServer((closing) => sse(empty, 20, closing), async (baseUrl) => {
    const { events } = await call("openai", baseUrl, 200);
    assert.deepEqual(events.at(-1), {
      type: "error",
      kind: "client",
      message: NO_PROGRESS,
      retryable: true,
      longTimeout: true,
    });
  });
});

Deno.test("postForStream() lets a model think with keep-alives for less than five idle timeouts between pieces", async () => {
  // Every 50 ms a keep-alive; every 700 ms (more than three idle timeouts, less than five) a
  // piece of text; the answer ends after the fourth piece, 2.8 s in: far past the 1 s limit
  // were the limit counted from the start rather than from the last piece. The pieces go by
  // the clock, not by counting keep-alives: on a loaded machine 14 late timers of 50 ms can
  // add up to more than the 1 s limit.
  let last = performance.now();
  let pieces = 0;
  const step = () => {
    if (performance.now() - last >= 700) {
      last = performance.now();
      const piece = chatChunk({ content: `p${++pieces} ` });
      return pieces === 4 ? piece + chatChunk({}, "stop") + "data: [DONE]\n\n" : piece;
    }
    return ": ping\n\n";
  };
  await withRawServer((closing) => sse(step, 50, closing), async (baseUrl) => {
    const { events, ms } = await call("openai", baseUrl, 200);
    const done = events.at(-1);
    assert.equal(done?.type, "done", JSON.stringify(done));
    assert.equal(done?.type === "done" && done.message.content, "p1 p2 p3 p4 ");
    assert.ok(ms > 2_000, `${ms} ms`);
  });
});
