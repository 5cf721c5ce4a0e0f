/**
 * A hostile Chat Completions server that packs one payload with a flood of pieces: OpenRouter
 * `reasoning_details` each under an index of its own, tool-call fragments that all name one id.
 * Merging them must take time linear in the pieces: a payload is merged whole before anything
 * else runs, so a square-time merge freezes tern (timers, Ctrl-C) for as long as it takes.
 */
import assert from "node:assert/strict";
import { withRawServer } from "../support/raw_model_server.ts";
import { createWireProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { done } from "../support/stream_events.ts";

/** The end of a Chat stream after the payload under test: `finish` as the finish reason. */
const end = (finish: string) =>
  `data: {"choices":[{"delta":{},"finish_reason":"${finish}"}]}\n\ndata: [DONE]\n\n`;

/** One payload of `delta` fields as an SSE event. */
const event = (delta: unknown) => `data: ${JSON.stringify({ choices: [{ delta }] })}\n\n`;

/**
 * The events of one answer whose SSE text is `body`, streamed by the real Chat provider as
 * `provider` (it decides which fields are read), and the milliseconds the reading took.
 */
async function streamed(
  provider: string,
  body: string,
): Promise<{ events: StreamEvent[]; ms: number }> {
  let result: { events: StreamEvent[]; ms: number } | undefined;
  await withRawServer(
    () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    async (baseUrl) => {
      const wire = createWireProvider(
        { name: provider, api: "openai", baseUrl, keyVariables: [], keyRequired: false },
        { requestTimeoutMs: 120_000, idleTimeoutMs: 120_000 },
      );
      const request = {
        model: "m",
        messages: [{ role: "user" as const, content: "hi" }],
        tools: [],
      };
      const started = performance.now();
      const events: StreamEvent[] = [];
      for await (const event of wire.stream(request, AbortSignal.timeout(180_000))) {
        events.push(event);
      }
      result = { events, ms: performance.now() - started };
    },
  );
  return result!;
}

Deno.test("Chat stream: 200,000 reasoning_details pieces under distinct indexes merge in linear time", async () => {
  const pieces = Array.from(
    { length: 200_000 },
    (_, index) => ({ type: "reasoning.text", index, text: "x" }),
  );
  const { events, ms } = await streamed(
    "openrouter",
    event({ reasoning_details: pieces }) + event({ content: "ok" }) + end("stop"),
  );
  const message = done(events).message;
  assert.equal(message.content, "ok");
  assert.equal(message.thinking?.[0].details?.length, 200_000);
  // The square-time merge took 70 s.
  assert.ok(ms < 8_000, `merging the pieces took ${Math.round(ms)} ms`);
});

Deno.test("Chat stream: reasoning_details pieces of one index and type still merge into one block", async () => {
  const piece = (detail: Record<string, unknown>) => event({ reasoning_details: [detail] });
  const { events } = await streamed(
    "openrouter",
    piece({ type: "reasoning.text", index: 0, text: "a" }) +
      piece({ type: "reasoning.encrypted", index: 0, data: "E1" }) +
      piece({ type: "reasoning.text", index: 0, text: "b", signature: "s" }) +
      piece({ type: "reasoning.encrypted", index: 0, data: "E2" }) + end("stop"),
  );
  assert.deepEqual(done(events).message.thinking?.[0].details, [
    { type: "reasoning.text", index: 0, text: "ab", signature: "s" },
    { type: "reasoning.encrypted", index: 0, data: "E1E2" },
  ]);
});

Deno.test("Chat stream: 80,000 tool-call fragments naming one id merge in linear time", async () => {
  // Half open a call each under an index of their own, all with the same id; the other half,
  // without an index, continue the first call with that id.
  const fragments = [
    ...Array.from({ length: 40_000 }, (_, index) => ({ index, id: "a", function: { name: "x" } })),
    ...Array.from({ length: 40_000 }, () => ({ id: "a", function: { arguments: "" } })),
  ];
  const { events, ms } = await streamed(
    "openai",
    event({ tool_calls: fragments }) + end("tool_calls"),
  );
  assert.equal(done(events).message.toolCalls?.length, 40_000);
  // The square-time merge took minutes.
  assert.ok(ms < 10_000, `merging the fragments took ${Math.round(ms)} ms`);
});

Deno.test("Chat stream: 12,000 extra_content pieces of one call merge in linear time, later keys winning", async () => {
  const fragments = [
    { index: 0, id: "c1", function: { name: "list", arguments: "{}" } },
    ...Array.from({ length: 12_000 }, (_, i) => ({ index: 0, extra_content: { [`k${i}`]: i } })),
    { index: 0, extra_content: { k0: "last" } },
  ];
  const { events, ms } = await streamed(
    "gemini",
    event({ tool_calls: fragments }) + end("tool_calls"),
  );
  const extra = done(events).message.toolCalls?.[0].extraContent ?? {};
  assert.equal(Object.keys(extra).length, 12_000);
  assert.equal(extra.k0, "last");
  assert.equal(extra.k11999, 11_999);
  // The square-time merge took about 40 s.
  assert.ok(ms < 10_000, `merging the pieces took ${Math.round(ms)} ms`);
});
