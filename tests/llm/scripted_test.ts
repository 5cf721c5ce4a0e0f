import assert from "node:assert/strict";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { parseScript, ScriptedProvider, type ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";

function request(content = "hello"): ModelRequest {
  return { model: "m", messages: [{ role: "user", content }], tools: [] };
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

Deno.test("ScriptedProvider.stream() streams text in chunks and ends with done", async () => {
  const provider = new ScriptedProvider([{ text: "Hello there, friend." }]);
  const events = await collect(provider.stream(request()));
  const deltas = events.flatMap((e) => e.type === "text_delta" ? [e.text] : []);
  assert.ok(deltas.length > 1);
  assert.equal(deltas.join(""), "Hello there, friend.");
  const last = events.at(-1);
  assert.equal(last?.type, "done");
  if (last?.type === "done") {
    assert.deepEqual(last.message, { role: "assistant", content: "Hello there, friend." });
    assert.equal(last.finishReason, "stop");
    assert.ok((last.usage?.inputTokens ?? 0) > 0 && (last.usage?.outputTokens ?? 0) > 0);
  }
});

Deno.test("ScriptedProvider.stream() gives tool calls default ids and finish tool_calls", async () => {
  const provider = new ScriptedProvider([
    { text: "x" },
    { toolCalls: [{ name: "ls", arguments: "{}" }, { name: "cat", arguments: "{bad" }] },
  ]);
  await collect(provider.stream(request()));
  const events = await collect(provider.stream(request()));
  const last = events.at(-1);
  assert.equal(last?.type, "done");
  if (last?.type === "done") {
    assert.deepEqual(last.message.toolCalls, [
      { id: "call_1_0", name: "ls", arguments: "{}" },
      { id: "call_1_1", name: "cat", arguments: "{bad" },
    ]);
    assert.equal(last.finishReason, "tool_calls");
  }
});

Deno.test("ScriptedProvider.requests records a copy of each request", async () => {
  const provider = new ScriptedProvider([{ text: "a" }, { text: "b" }]);
  const first = request("one");
  await collect(provider.stream(first));
  first.messages.push({ role: "assistant", content: "later change" });
  await collect(provider.stream(request("two")));
  assert.deepEqual(provider.requests, [request("one"), request("two")]);
});

Deno.test("ScriptedProvider.stream() reports an exhausted script as a client error", async () => {
  const provider = new ScriptedProvider([{ text: "only" }]);
  await collect(provider.stream(request()));
  const events = await collect(provider.stream(request()));
  assert.deepEqual(events, [{
    type: "error",
    kind: "client",
    message: "Scripted model has no reply for request 2: the script has 1 reply",
  }]);
});

Deno.test("ScriptedProvider.stream() passes request and index to a script function", async () => {
  const seen: [string, number][] = [];
  const provider = new ScriptedProvider((req, index) => {
    seen.push([req.messages[0].content, index]);
    if (index === 1) throw new Error("no more");
    return { text: `reply ${index}` };
  });
  await collect(provider.stream(request("a")));
  const events = await collect(provider.stream(request("b")));
  assert.deepEqual(seen, [["a", 0], ["b", 1]]);
  assert.deepEqual(events, [{
    type: "error",
    kind: "client",
    message: "Scripted model failed on request 2: no more",
  }]);
});

Deno.test("ScriptedProvider.stream() ends with aborted when the signal fires mid-stream", async () => {
  const provider = new ScriptedProvider([{ text: "a fairly long reply to interrupt" }]);
  const controller = new AbortController();
  const events: StreamEvent[] = [];
  for await (const event of provider.stream(request(), controller.signal)) {
    events.push(event);
    controller.abort();
  }
  assert.equal(events.length, 2);
  assert.equal(events[0].type, "text_delta");
  assert.deepEqual(events[1], { type: "error", kind: "aborted", message: "Model request aborted" });
});

Deno.test("ScriptedProvider.stream() waits in a hang until the signal fires", async () => {
  const provider = new ScriptedProvider([{ fault: "hang" }]);
  const controller = new AbortController();
  const pending = collect(provider.stream(request(), controller.signal));
  setTimeout(() => controller.abort(), 0);
  assert.deepEqual(await pending, [{
    type: "error",
    kind: "aborted",
    message: "Model request aborted",
  }]);
});

Deno.test("ScriptedProvider.stream() honours the signal during delays", async () => {
  const provider = new ScriptedProvider([{ text: "slow text" }], { delayMs: 60_000 });
  const controller = new AbortController();
  const pending = collect(provider.stream(request(), controller.signal));
  setTimeout(() => controller.abort(), 0);
  assert.deepEqual(await pending, [{
    type: "error",
    kind: "aborted",
    message: "Model request aborted",
  }]);
});

/** Replies whose events must match between ScriptedProvider and the HTTP path. */
const PARITY_REPLIES: ScriptedReply[] = [
  { text: "Plain answer with ünïcödé 👍🏽 text." },
  {
    text: "Two calls.",
    toolCalls: [
      { id: "c1", name: "read_file", arguments: '{"path":"a.ts"}' },
      { name: "grep", arguments: "{" },
    ],
  },
  { text: "truncat", finishReason: "length", usage: { inputTokens: 9, outputTokens: 3 } },
  { fault: "http500" },
  { fault: "http429" },
  { fault: "http401" },
  { text: "abc", toolCalls: [{ name: "ls", arguments: "{}" }], fault: "drop_mid_stream" },
  { text: "abc", fault: "malformed_sse" },
  { fault: "empty" },
];

Deno.test("ScriptedProvider.stream() yields what the OpenAI provider yields for the same script", async () => {
  const server = await startScriptedServer(PARITY_REPLIES);
  try {
    const http = createOpenAiChatProvider({ baseUrl: server.baseUrl });
    const local = new ScriptedProvider(PARITY_REPLIES);
    for (const [i, reply] of PARITY_REPLIES.entries()) {
      const req = request(`request ${i}`);
      const expected = await collect(http.stream(req));
      const actual = await collect(local.stream(req));
      assert.deepEqual(actual, expected, `reply ${i}: ${JSON.stringify(reply)}`);
    }
  } finally {
    await server.close();
  }
});

Deno.test("parseScript() rejects a reply with an unknown fault", () => {
  assert.throws(
    () => parseScript([{ text: "ok" }, { fault: "explode" }]),
    (error) =>
      error instanceof TypeError &&
      error.message === 'Cannot use script reply 2: unknown fault "explode"',
  );
  assert.deepEqual(parseScript([{ text: "ok" }]), [{ text: "ok" }]);
});
