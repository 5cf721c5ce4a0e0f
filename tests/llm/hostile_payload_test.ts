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

Deno.test("Chat stream: 200,000 reasoning_details pieces under distinct indexes merge in linear time", async () => {
  const pieces = Array.from(
    { length: 200_000 },
    (_, index) => ({ type: "reasoning.text", index, text: "x" }),
  );
  const body =
    `data: ${JSON.stringify({ choices: [{ delta: { reasoning_details: pieces } }] })}\n\n` +
    'data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
  await withRawServer(
    () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    async (baseUrl) => {
      const wire = createWireProvider(
        {
          name: "openrouter",
          api: "openai",
          baseUrl,
          apiKey: "sk-test-0123456789",
          keyVariables: [],
          keyRequired: true,
        },
        { requestTimeoutMs: 60_000, idleTimeoutMs: 60_000 },
      );
      const request = {
        model: "m",
        messages: [{ role: "user" as const, content: "hi" }],
        tools: [],
      };
      const started = performance.now();
      const events: StreamEvent[] = [];
      for await (const event of wire.stream(request, AbortSignal.timeout(120_000))) {
        events.push(event);
      }
      const elapsed = performance.now() - started;
      const message = done(events).message;
      assert.equal(message.content, "ok");
      assert.equal(message.thinking?.[0].details?.length, 200_000);
      assert.ok(elapsed < 8_000, `merging the pieces took ${Math.round(elapsed)} ms`);
    },
  );
});

Deno.test("Chat stream: reasoning_details pieces of one index and type still merge into one block", async () => {
  const chunk = (piece: Record<string, unknown>) =>
    `data: ${JSON.stringify({ choices: [{ delta: { reasoning_details: [piece] } }] })}\n\n`;
  const body = chunk({ type: "reasoning.text", index: 0, text: "a" }) +
    chunk({ type: "reasoning.encrypted", index: 0, data: "E1" }) +
    chunk({ type: "reasoning.text", index: 0, text: "b", signature: "s" }) +
    chunk({ type: "reasoning.encrypted", index: 0, data: "E2" }) +
    'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
  await withRawServer(
    () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    async (baseUrl) => {
      const wire = createWireProvider(
        { name: "openrouter", api: "openai", baseUrl, keyVariables: [], keyRequired: false },
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
      assert.deepEqual(done(events).message.thinking?.[0].details, [
        { type: "reasoning.text", index: 0, text: "ab", signature: "s" },
        { type: "reasoning.encrypted", index: 0, data: "E1E2" },
      ]);
    },
  );
});

Deno.test("Chat stream: 80,000 tool-call fragments naming one id merge in linear time", async () => {
  // Half open a call each under an index of their own, all with the same id; the other half,
  // without an index, continue the first call with that id.
  const fragments = [
    ...Array.from({ length: 40_000 }, (_, index) => ({ index, id: "a", function: { name: "x" } })),
    ...Array.from({ length: 40_000 }, () => ({ id: "a", function: { arguments: "" } })),
  ];
  const body = `data: ${JSON.stringify({ choices: [{ delta: { tool_calls: fragments } }] })}\n\n` +
    'data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
  await withRawServer(
    () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    async (baseUrl) => {
      const wire = createWireProvider(
        { name: "openai", api: "openai", baseUrl, keyVariables: [], keyRequired: false },
        { requestTimeoutMs: 60_000, idleTimeoutMs: 60_000 },
      );
      const request = {
        model: "m",
        messages: [{ role: "user" as const, content: "hi" }],
        tools: [],
      };
      const started = performance.now();
      const events: StreamEvent[] = [];
      for await (const event of wire.stream(request, AbortSignal.timeout(120_000))) {
        events.push(event);
      }
      const elapsed = performance.now() - started;
      assert.equal(done(events).message.toolCalls?.length, 40_000);
      assert.ok(elapsed < 10_000, `merging the fragments took ${Math.round(elapsed)} ms`);
    },
  );
});

Deno.test("Chat stream: 12,000 extra_content pieces of one call merge in linear time, later keys winning", async () => {
  const fragments = [
    { index: 0, id: "c1", function: { name: "list", arguments: "{}" } },
    ...Array.from({ length: 12_000 }, (_, i) => ({ index: 0, extra_content: { [`k${i}`]: i } })),
    { index: 0, extra_content: { k0: "last" } },
  ];
  const body = `data: ${JSON.stringify({ choices: [{ delta: { tool_calls: fragments } }] })}\n\n` +
    'data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
  await withRawServer(
    () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    async (baseUrl) => {
      const wire = createWireProvider(
        { name: "gemini", api: "openai", baseUrl, keyVariables: [], keyRequired: false },
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
      const elapsed = performance.now() - started;
      const extra = done(events).message.toolCalls?.[0].extraContent ?? {};
      assert.equal(Object.keys(extra).length, 12_000);
      assert.equal(extra.k0, "last");
      assert.equal(extra.k11999, 11_999);
      assert.ok(elapsed < 10_000, `merging the pieces took ${Math.round(elapsed)} ms`);
    },
  );
});
