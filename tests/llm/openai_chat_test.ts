import assert from "node:assert/strict";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { toChatRequestBody, toFinishReason } from "../../src/llm/openai_chat_wire.ts";
import type { Script } from "../../src/llm/scripted.ts";
import type { ModelRequest, StreamEvent } from "../../src/llm/types.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { done } from "../support/stream_events.ts";

const REQUEST: ModelRequest = {
  model: "gpt-test",
  messages: [{ role: "user", content: "hello" }],
  tools: [],
};

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

Deno.test("createOpenAiChatProvider() streams text in several deltas and ends with done", async () => {
  await withScriptedServer([{ text: "The answer is forty-two, as always." }], async (server) => {
    const events = await collect(
      createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(REQUEST),
    );
    const deltas = events.filter((e) => e.type === "text_delta");
    assert.ok(deltas.length >= 3, `expected several text deltas, got ${deltas.length}`);
    assert.equal(deltas.map((e) => e.text).join(""), "The answer is forty-two, as always.");
    const end = done(events);
    assert.deepEqual(end.message, {
      role: "assistant",
      content: "The answer is forty-two, as always.",
    });
    assert.equal(end.finishReason, "stop");
    assert.equal(events.filter((e) => e.type === "done" || e.type === "error").length, 1);
  });
});

Deno.test("createOpenAiChatProvider() reassembles a tool call sent over three deltas", async () => {
  const args = '{"path":"src/main.ts","offset":10}';
  await withScriptedServer(
    [{ toolCalls: [{ id: "call_x", name: "read_file", arguments: args }] }],
    async (server) => {
      const events = await collect(
        createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(REQUEST),
      );
      const deltas = events.filter((e) => e.type === "tool_call_delta");
      assert.deepEqual(deltas, [
        { type: "tool_call_delta", index: 0, id: "call_x", name: "read_file" },
        { type: "tool_call_delta", index: 0 },
        { type: "tool_call_delta", index: 0 },
      ]);
      const end = done(events);
      assert.deepEqual(end.message.toolCalls, [{
        id: "call_x",
        name: "read_file",
        arguments: args,
      }]);
      assert.equal(end.message.content, "");
      assert.equal(end.finishReason, "tool_calls");
    },
  );
});

Deno.test("createOpenAiChatProvider() keeps two interleaved tool calls apart by index", async () => {
  const script: Script = [{
    text: "Reading both.",
    toolCalls: [
      { id: "call_1", name: "read_file", arguments: '{"path":"a.ts"}' },
      { id: "call_2", name: "grep", arguments: '{"pattern":"TODO","glob":"*.ts"}' },
    ],
  }];
  await withScriptedServer(script, async (server) => {
    const events = await collect(
      createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(REQUEST),
    );
    const order = events.flatMap((e) => e.type === "tool_call_delta" ? [e.index] : []);
    assert.deepEqual(order, [0, 1, 0, 1, 0, 1]);
    assert.deepEqual(done(events).message, {
      role: "assistant",
      content: "Reading both.",
      toolCalls: [
        { id: "call_1", name: "read_file", arguments: '{"path":"a.ts"}' },
        { id: "call_2", name: "grep", arguments: '{"pattern":"TODO","glob":"*.ts"}' },
      ],
    });
  });
});

Deno.test("createOpenAiChatProvider() reports usage from the final usage chunk", async () => {
  const usage = { inputTokens: 1234, outputTokens: 56, cachedTokens: 1000, reasoningTokens: 7 };
  await withScriptedServer([{ text: "ok", usage }], async (server) => {
    const events = await collect(
      createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(REQUEST),
    );
    assert.deepEqual(done(events).usage, usage);
    assert.deepEqual(server.requests[0].body.stream_options, { include_usage: true });
    assert.equal(server.requests[0].body.stream, true);
  });
});

Deno.test("createOpenAiChatProvider() maps finish_reason length to length", async () => {
  await withScriptedServer([{ text: "cut o", finishReason: "length" }], async (server) => {
    const events = await collect(
      createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(REQUEST),
    );
    assert.equal(done(events).finishReason, "length");
  });
});

Deno.test("createOpenAiChatProvider() maps an unknown finish_reason to other", async () => {
  await withScriptedServer([{ text: "hidden", finishReason: "other" }], async (server) => {
    const events = await collect(
      createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(REQUEST),
    );
    assert.equal(done(events).finishReason, "other");
  });
});

Deno.test("toFinishReason() maps the legacy function_call reason to tool_calls", () => {
  assert.equal(toFinishReason("function_call"), "tool_calls");
  assert.equal(toFinishReason("tool_calls"), "tool_calls");
});

Deno.test("toFinishReason() maps Mistral's model_length to length", () => {
  assert.equal(toFinishReason("model_length"), "length");
});

Deno.test("toFinishReason() maps content_filter to refusal and reasons it does not know to other", () => {
  assert.equal(toFinishReason("content_filter"), "refusal");
  assert.equal(toFinishReason("eos_token"), "other");
});

Deno.test("createOpenAiChatProvider() sends messages, tools and limits in the OpenAI shape", async () => {
  const request: ModelRequest = {
    model: "gpt-test",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Read a.ts" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"a.ts"}' }],
      },
      { role: "tool", toolCallId: "call_1", name: "read_file", content: "SUCCEEDED\nx" },
      { role: "assistant", content: "Done." },
    ],
    tools: [{
      name: "read_file",
      description: "Reads a file",
      parameters: { type: "object", properties: { path: { type: "string" } } },
    }],
    maxTokens: 500,
    temperature: 0.2,
  };
  await withScriptedServer([{ text: "ok" }], async (server) => {
    const provider = createOpenAiChatProvider({
      baseUrl: server.baseUrl + "/",
      apiKey: "sk-test-123456",
      headers: { "x-title": "tern" },
    });
    done(await collect(provider.stream(request)));
    const [recorded] = server.requests;
    assert.equal(recorded.path, "/v1/chat/completions");
    assert.equal(recorded.headers["authorization"], "Bearer sk-test-123456");
    assert.equal(recorded.headers["x-title"], "tern");
    assert.deepEqual(recorded.body, {
      model: "gpt-test",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Read a.ts" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "call_1",
            type: "function",
            function: { name: "read_file", arguments: '{"path":"a.ts"}' },
          }],
        },
        { role: "tool", tool_call_id: "call_1", content: "SUCCEEDED\nx" },
        { role: "assistant", content: "Done." },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{
        type: "function",
        function: {
          name: "read_file",
          description: "Reads a file",
          parameters: { type: "object", properties: { path: { type: "string" } } },
        },
      }],
      max_tokens: 500,
      temperature: 0.2,
    });
    assert.deepEqual(recorded.modelRequest, request);
  });
});

Deno.test("createOpenAiChatProvider() omits tools, max_tokens and temperature when not given", async () => {
  await withScriptedServer([{ text: "ok" }], async (server) => {
    done(await collect(createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(REQUEST)));
    const body = server.requests[0].body;
    assert.equal("tools" in body, false);
    assert.equal("max_tokens" in body, false);
    assert.equal("temperature" in body, false);
    assert.equal(server.requests[0].headers["authorization"], undefined);
  });
});

Deno.test("createOpenAiChatProvider() sends reasoning and no temperature when reasoning is set", async () => {
  const request: ModelRequest = {
    ...REQUEST,
    temperature: 0.7,
    reasoning: { effort: "high", budgetTokens: 8000 },
  };
  await withScriptedServer([{ text: "ok" }, { text: "ok" }], async (server) => {
    done(await collect(createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(request)));
    const provider = createOpenAiChatProvider({
      baseUrl: server.baseUrl,
      dialect: { reasoningField: "reasoning" },
    });
    done(await collect(provider.stream(request)));
    const [plain, openRouter] = server.requests.map((recorded) => recorded.body);
    assert.equal(plain.reasoning_effort, "high");
    assert.equal("temperature" in plain, false, JSON.stringify(plain));
    assert.deepEqual(openRouter.reasoning, { effort: "high" });
    assert.equal("temperature" in openRouter, false, JSON.stringify(openRouter));
  });
});

Deno.test("createOpenAiChatProvider() serves several requests from one provider in order", async () => {
  await withScriptedServer([{ text: "one" }, { text: "two" }], async (server) => {
    const provider = createOpenAiChatProvider({ baseUrl: server.baseUrl });
    assert.equal(done(await collect(provider.stream(REQUEST))).message.content, "one");
    assert.equal(done(await collect(provider.stream(REQUEST))).message.content, "two");
    assert.equal(server.requests.length, 2);
  });
});

Deno.test("createOpenAiChatProvider() releases the connection when the consumer stops early", async () => {
  await withScriptedServer(
    [{ text: "a long reply that the consumer abandons part way" }],
    async (server) => {
      for await (
        const event of createOpenAiChatProvider({ baseUrl: server.baseUrl }).stream(REQUEST)
      ) {
        assert.equal(event.type, "text_delta");
        break;
      }
    },
  );
});

Deno.test("createOpenAiChatProvider() rejects a base URL that is not a URL", () => {
  assert.throws(
    () => createOpenAiChatProvider({ baseUrl: "not a url" }),
    (error) => error instanceof TypeError && /"not a url": invalid URL/.test(error.message),
  );
});

Deno.test("startScriptedServer() lists its model at GET /v1/models", async () => {
  await withScriptedServer([], async (server) => {
    const response = await fetch(`${server.baseUrl}/models`);
    const body = await response.json();
    assert.equal(response.status, 200);
    assert.equal(body.data[0].id, "scripted-model");
  });
});

Deno.test("toChatRequestBody() sends arguments that are not one JSON object back as {}", () => {
  const args = ['{"command": "ls"', "", "[1]", '{"command": "ls"}'];
  const body = toChatRequestBody({
    model: "m",
    messages: [{
      role: "assistant",
      content: "",
      toolCalls: args.map((text, i) => ({ id: `call_${i}`, name: "bash", arguments: text })),
    }],
    tools: [],
  });
  const [assistant] = body.messages;
  assert.ok(assistant.role === "assistant");
  assert.deepEqual(assistant.tool_calls?.map((call) => call.function.arguments), [
    "{}",
    "{}",
    "{}",
    '{"command": "ls"}',
  ]);
});
