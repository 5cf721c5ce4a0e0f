/**
 * Streams replayed from real servers (tests/fixtures/streams), served byte for byte on
 * 127.0.0.1 through the real wire providers, the router and the agent loop: parallel calls under
 * one index, invalid arguments sent back, errors inside the stream, unusual stop reasons,
 * usage and call ids where only some servers put them.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { z } from "zod";
import { runTurn, type TurnResult } from "../../src/agent/loop.ts";
import type { AgentEvent } from "../../src/core/events.ts";
import type { Message } from "../../src/core/messages.ts";
import { createAnthropicProvider } from "../../src/llm/anthropic.ts";
import { NO_ANSWER_MESSAGE, SseErrorFieldError } from "../../src/llm/errors.ts";
import type { ApiStyle } from "../../src/llm/model_info.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { createOpenAiResponsesProvider } from "../../src/llm/openai_responses.ts";
import { createRouter } from "../../src/llm/router.ts";
import { readSseData } from "../../src/llm/sse.ts";
import type { Provider, StreamEvent } from "../../src/llm/types.ts";
import { defineTool } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { collect, target } from "./_router_helpers.ts";

const FIXTURES = join(dirname(new URL(import.meta.url).pathname), "../fixtures/streams");

/** One answer of the server: a fixture's bytes as an event stream, or any other response. */
type Answer = string | { status: number; contentType: string; body: string };

interface Replay {
  baseUrl: string;
  /** The JSON bodies the server received, in order. */
  bodies: Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * Answers request i with `answers[i]`. With `rejectInvalidArguments`, a request whose earlier
 * tool calls carry arguments that are not JSON gets Ollama's 400, as Ollama checks them.
 */
function serve(answers: Answer[], options: { rejectInvalidArguments?: boolean } = {}): Replay {
  const bodies: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.json();
    bodies.push(body);
    if (options.rejectInvalidArguments && hasInvalidArguments(body)) {
      return Response.json({
        error: { message: "invalid tool call arguments", type: "invalid_request_error" },
      }, { status: 400 });
    }
    const answer = answers[bodies.length - 1];
    if (answer === undefined) return new Response("no more answers", { status: 500 });
    if (typeof answer !== "string") {
      return new Response(answer.body, {
        status: answer.status,
        headers: { "content-type": answer.contentType },
      });
    }
    const stream = await Deno.readTextFile(join(FIXTURES, answer));
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    bodies,
    close: () => server.shutdown(),
  };
}

function hasInvalidArguments(body: Record<string, unknown>): boolean {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages.some((message) =>
    (message.tool_calls ?? []).some((call: { function: { arguments: string } }) => {
      try {
        JSON.parse(call.function.arguments);
        return false;
      } catch {
        return true;
      }
    })
  );
}

/** The real wire provider of `api` at `baseUrl`, behind a router that retries at once. */
function routed(api: ApiStyle, baseUrl: string): Provider {
  const options = { baseUrl, apiKey: "sk-test-key-0123456789" };
  const provider = api === "anthropic"
    ? createAnthropicProvider(options)
    : api === "openai-responses"
    ? createOpenAiResponsesProvider(options)
    : createOpenAiChatProvider(options);
  return createRouter({
    targets: [target(provider, "replay", "m", { api })],
    retryBaseMs: 1,
    random: () => 0,
  });
}

interface Turn {
  result: TurnResult;
  events: AgentEvent[];
  bodies: Record<string, unknown>[];
  /** What the loop recorded, as a session keeps it. */
  recorded: Message[];
  /** Each tool call the stand-in tools ran: `name` and its arguments. */
  ran: string[];
}

/** Runs one turn over `answers` with `bash`, `write` and `pwd` stand-ins that record their calls. */
async function turnOver(
  api: ApiStyle,
  answers: Answer[],
  options: { rejectInvalidArguments?: boolean; maxRounds?: number } = {},
): Promise<Turn> {
  const replay = serve(answers, options);
  const ran: string[] = [];
  const bash = defineTool({
    name: "bash",
    description: "runs a command (a stand-in that records it)",
    parameters: z.strictObject({ command: z.string() }),
    readOnly: false,
    runsIn: "host",
    paths: () => [],
    execute: (args) => {
      ran.push(`bash ${args.command}`);
      return Promise.resolve({ output: "" });
    },
  });
  const write = defineTool({
    name: "write",
    description: "writes a file (a stand-in that records it)",
    parameters: z.strictObject({ path: z.string(), content: z.string() }),
    readOnly: false,
    runsIn: "host",
    paths: () => [],
    execute: (args) => {
      ran.push(`write ${args.path} ${args.content}`);
      return Promise.resolve({ output: "written" });
    },
  });
  const pwd = defineTool({
    name: "pwd",
    description: "prints the directory (a stand-in without parameters that records its call)",
    parameters: z.strictObject({}),
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute: () => {
      ran.push("pwd");
      return Promise.resolve({ output: "/work" });
    },
  });
  const events: AgentEvent[] = [];
  const recorded: Message[] = [];
  try {
    const result = await runTurn({
      messages: [{ role: "user", content: "do the task" }],
      provider: routed(api, replay.baseUrl),
      model: "m",
      tools: new ToolRegistry([bash, write, pwd]),
      workspace: "/nonexistent",
      emit: (event) => events.push(event),
      onMessage: (message) => recorded.push(message),
      maxRounds: options.maxRounds,
    });
    return { result, events, bodies: replay.bodies, recorded, ran };
  } finally {
    await replay.close();
  }
}

/** The tool calls of the assistant message the second request sent back (Chat shape). */
function sentBackCalls(bodies: Record<string, unknown>[]): {
  id: string;
  function: { name: string; arguments: string };
}[] {
  const messages = bodies[1].messages as Record<string, unknown>[];
  const assistant = messages.find((message) => message.role === "assistant");
  assert.ok(assistant !== undefined, "the second request has no assistant message");
  return assistant.tool_calls as { id: string; function: { name: string; arguments: string } }[];
}

/** Events of one request straight from a wire provider of `api` (no router, no retry). */
async function streamOnce(api: ApiStyle, answer: Answer): Promise<StreamEvent[]> {
  const replay = serve([answer]);
  const options = { baseUrl: replay.baseUrl, apiKey: "sk-test-key-0123456789" };
  const provider = api === "anthropic"
    ? createAnthropicProvider(options)
    : api === "openai-responses"
    ? createOpenAiResponsesProvider(options)
    : createOpenAiChatProvider(options);
  try {
    return await collect(
      provider.stream({ model: "m", messages: [{ role: "user", content: "hi" }], tools: [] }),
    );
  } finally {
    await replay.close();
  }
}

// Parallel tool calls under one index.

const PARALLEL: { stream: string; ran: string[]; ids: string[] }[] = [
  {
    // Ollama: each call whole in its own chunk, all as index 0, each with its own id.
    stream: "ollama_parallel_calls.sse",
    ran: ['write hello.py print("hello")', 'write world.py print("world")'],
    ids: ["call_k3j1", "call_9x2m"],
  },
  {
    stream: "same_index_parallel_calls.sse",
    ran: ["bash echo A > a1.txt", "bash echo B > b1.txt"],
    ids: ["call_A", "call_B"],
  },
  {
    // Gemini behind a proxy: no index, empty ids, each call whole.
    stream: "empty_id_parallel_calls.sse",
    ran: ["bash echo A > a1.txt", "bash echo B > b1.txt"],
    ids: ["call_0", "call_1"],
  },
];

for (const { stream, ran, ids } of PARALLEL) {
  Deno.test(`runTurn() runs each of several calls sent whole under one index (${stream})`, async () => {
    const turn = await turnOver("openai", [stream, "plain_answer.sse"], {
      rejectInvalidArguments: true,
    });
    assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
    assert.deepEqual(turn.ran, ran);
    const calls = sentBackCalls(turn.bodies);
    assert.deepEqual(calls.map((call) => call.id), ids);
    for (const call of calls) assert.doesNotThrow(() => JSON.parse(call.function.arguments));
    const results = (turn.bodies[1].messages as Record<string, unknown>[])
      .filter((message) => message.role === "tool")
      .map((message) => message.tool_call_id);
    assert.deepEqual(results, ids);
  });
}

// Invalid arguments sent back.

Deno.test("runTurn() sends invalid tool-call arguments back as {} so Ollama takes the next request", async () => {
  const turn = await turnOver("openai", ["ollama_invalid_arguments.sse", "plain_answer.sse"], {
    rejectInvalidArguments: true,
  });
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  assert.equal(turn.result.text, "Two files.");
  const [call] = sentBackCalls(turn.bodies);
  assert.deepEqual(call, {
    id: "call_bad",
    type: "function",
    function: { name: "bash", arguments: "{}" },
  });
  const tool = (turn.bodies[1].messages as Record<string, unknown>[]).at(-1);
  assert.match(String(tool?.content), /Arguments for "bash" are not valid JSON/);
  // The session keeps what the model sent.
  const assistant = turn.recorded.find((message) => message.role === "assistant");
  assert.equal(
    assistant?.role === "assistant" ? assistant.toolCalls?.[0].arguments : undefined,
    '{"command": "ls"',
  );
});

// Errors inside the stream.

for (
  const [stream, reason] of [
    [
      "openai_stream_server_error.sse",
      "Model API stream error: The server had an error while processing your request. Sorry about that!",
    ],
    [
      "openrouter_midstream_502.sse",
      "Model API stream error: Provider returned error: upstream disconnected",
    ],
    ["vllm_internal_error.sse", "Model API stream error: InternalServerError"],
  ]
) {
  Deno.test(`runTurn() retries a server error sent inside a Chat stream (${stream})`, async () => {
    const turn = await turnOver("openai", [stream, "plain_answer.sse"]);
    assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
    assert.equal(turn.result.text, "Two files.");
    assert.equal(turn.bodies.length, 2);
    const retries = turn.events.filter((event) => event.type === "retry");
    assert.deepEqual(retries.map((event) => event.reason), [reason]);
  });
}

Deno.test("createOpenAiChatProvider() does not mark an in-stream invalid request error retryable", async () => {
  const events = await streamOnce("openai", {
    status: 200,
    contentType: "text/event-stream",
    body: 'data: {"error":{"message":"Invalid schema","type":"invalid_request_error","code":400}}' +
      "\n\n",
  });
  assert.deepEqual(events, [
    { type: "error", kind: "client", message: "Model API stream error: Invalid schema" },
  ]);
});

Deno.test("runTurn() does not retry a server error sent inside a stream after a tool call began", async () => {
  const body = 'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",' +
    '"type":"function","function":{"name":"bash","arguments":"{\\"comm"}}]}}]}\n\n' +
    'data: {"error":{"message":"The server had an error","type":"server_error"}}\n\n';
  const turn = await turnOver("openai", [
    { status: 200, contentType: "text/event-stream", body },
    "plain_answer.sse",
  ]);
  assert.equal(turn.result.exitReason, "CLIENT_ERROR");
  assert.equal(turn.bodies.length, 1);
  assert.match(turn.result.error ?? "", /in the middle of a tool call; not retried/);
});

Deno.test("createOpenAiChatProvider() reports llama.cpp's error: line with the server's message", async () => {
  const events = await streamOnce("openai", "llamacpp_error_line.sse");
  assert.deepEqual(events, [{
    type: "error",
    kind: "client",
    message: "Model API stream error: the request exceeds the available context size. " +
      "try increasing the context size or enable context shift",
    // The loop compacts the conversation and asks again once.
    contextOverflow: true,
  }]);
});

Deno.test("readSseData() yields the events before an error: line, then throws with its value", async () => {
  const body = new Response(
    'data: {"n":1}\n\nerror: {"code":400,"message":"too long"}\n\ndata: [DONE]\n\n',
  ).body;
  assert.ok(body !== null);
  const data: string[] = [];
  await assert.rejects(
    async () => {
      for await (const item of readSseData(body)) data.push(item);
    },
    (error) =>
      error instanceof SseErrorFieldError && error.value === '{"code":400,"message":"too long"}',
  );
  assert.deepEqual(data, ['{"n":1}']);
});

Deno.test("createOpenAiChatProvider() says a stream of only [DONE] ended without an answer", async () => {
  const events = await streamOnce("openai", "done_only.sse");
  assert.deepEqual(events, [
    { type: "error", kind: "client", message: NO_ANSWER_MESSAGE, retryable: true },
  ]);
});

// Stop reasons that are no answer.

for (
  const { api, stream, reason, text } of [
    {
      api: "openai",
      stream: "openai_content_filter.sse",
      reason: "content_filter",
      text: "Here is how to",
    },
    { api: "anthropic", stream: "anthropic_refusal.sse", reason: "refusal", text: "" },
    { api: "anthropic", stream: "anthropic_refusal_text.sse", reason: "refusal", text: "I can" },
    {
      api: "openai-responses",
      stream: "responses_incomplete_content_filter.sse",
      reason: "content_filter",
      text: "",
    },
  ] as const
) {
  Deno.test(`runTurn() ends CLIENT_ERROR naming "${reason}" when the answer was stopped (${stream})`, async () => {
    const turn = await turnOver(api, [stream]);
    assert.equal(turn.result.exitReason, "CLIENT_ERROR");
    assert.equal(
      turn.result.error,
      `The model API stopped the answer as "${reason}" (a content filter or the model's ` +
        "refusal): rephrase the request",
    );
    assert.equal(turn.result.text, text);
    const said = turn.recorded.filter((message) => message.role === "assistant");
    assert.deepEqual(said, text === "" ? [] : [{ role: "assistant", content: text }]);
  });
}

Deno.test("runTurn() continues a turn Anthropic paused by sending the conversation back", async () => {
  const turn = await turnOver("anthropic", [
    "anthropic_pause_turn.sse",
    "anthropic_after_pause.sse",
  ]);
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  assert.equal(turn.result.text, "AFTER-PAUSE");
  assert.equal(turn.result.rounds, 2);
  const messages = turn.bodies[1].messages as Record<string, unknown>[];
  assert.deepEqual(messages.map((message) => message.role), ["user", "assistant"]);
  assert.deepEqual(messages[1].content, [{ type: "text", text: "Searching..." }]);
});

Deno.test("runTurn() continues a pause without content by sending the same conversation", async () => {
  const turn = await turnOver("anthropic", [
    "anthropic_pause_turn_empty.sse",
    "anthropic_after_pause.sse",
  ]);
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  assert.equal(turn.result.text, "AFTER-PAUSE");
  assert.deepEqual(turn.bodies[1].messages, turn.bodies[0].messages);
});

// Usage and ids where some servers put them.

Deno.test("createOpenAiChatProvider() records Groq's usage sent in x_groq", async () => {
  const events = await streamOnce("openai", "groq_usage.sse");
  const done = events.at(-1);
  assert.equal(done?.type, "done");
  assert.deepEqual(done?.type === "done" ? done.usage : undefined, {
    inputTokens: 100,
    outputTokens: 20,
    cachedTokens: 0,
    reasoningTokens: 0,
  });
});

Deno.test("createOpenAiChatProvider() records Moonshot's usage sent in the choice", async () => {
  const events = await streamOnce("openai", "moonshot_usage_in_choice.sse");
  const done = events.at(-1);
  assert.equal(done?.type, "done");
  assert.deepEqual(done?.type === "done" ? done.usage : undefined, {
    inputTokens: 19,
    outputTokens: 13,
    cachedTokens: 8,
    reasoningTokens: 0,
  });
});

Deno.test("runTurn() answers a Responses call by the call_id that came only when the item was done", async () => {
  const turn = await turnOver("openai-responses", [
    "responses_call_id_late.sse",
    "responses_final_text.sse",
  ]);
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  assert.deepEqual(turn.ran, ["bash echo R > r1.txt"]);
  const input = turn.bodies[1].input as Record<string, unknown>[];
  const ids = input.filter((item) => "call_id" in item).map((item) => [item.type, item.call_id]);
  assert.deepEqual(ids, [["function_call", "call_REAL"], ["function_call_output", "call_REAL"]]);
});

Deno.test("runTurn() quotes a proxy's HTML error page as text in the retry reason", async () => {
  const page = "<html><head><title>503 Service Temporarily Unavailable</title></head><body>" +
    "<center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx</center>" +
    "</body></html>";
  const turn = await turnOver("openai", [
    { status: 503, contentType: "text/html", body: page },
    "plain_answer.sse",
  ]);
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  const retries = turn.events.filter((event) => event.type === "retry");
  assert.deepEqual(retries.map((event) => event.reason), [
    "HTTP 503 from model API: 503 Service Temporarily Unavailable 503 Service Temporarily " +
    "Unavailable nginx",
  ]);
});

// Finish reasons beyond OpenAI's.

for (
  const [stream, word] of [
    ["mistral_finish_error.sse", "error"],
    ["deepseek_insufficient_resource.sse", "insufficient_system_resource"],
  ]
) {
  Deno.test(`runTurn() retries an answer whose finish reason says the server failed (${stream})`, async () => {
    const turn = await turnOver("openai", [stream, "plain_answer.sse"]);
    assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
    assert.equal(turn.result.text, "Two files.");
    const retries = turn.events.filter((event) => event.type === "retry");
    assert.deepEqual(retries.map((event) => event.reason), [
      `Model API stream ended with finish reason "${word}": the server failed before the ` +
      "answer was whole",
    ]);
    // The cut-off text was never kept.
    const said = turn.recorded.filter((message) => message.role === "assistant");
    assert.deepEqual(said, [{ role: "assistant", content: "Two files." }]);
  });
}

Deno.test("runTurn() runs no tool call of an answer vLLM aborted", async () => {
  const body =
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"chatcmpl-tool-1",' +
    '"type":"function","function":{"name":"bash","arguments":"{\\"command\\": \\"rm -r build\\"}"}}]},' +
    '"finish_reason":null}]}\n\n' +
    'data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"abort"}]}\n\n' +
    "data: [DONE]\n\n";
  const turn = await turnOver("openai", [
    { status: 200, contentType: "text/event-stream", body },
    "plain_answer.sse",
  ]);
  assert.equal(turn.result.exitReason, "CLIENT_ERROR");
  assert.deepEqual(turn.ran, []);
  assert.match(turn.result.error ?? "", /finish reason "abort"/);
});

Deno.test("runTurn() ends LENGTH_LIMIT when Mistral stops for model_length", async () => {
  const turn = await turnOver("openai", ["mistral_model_length.sse"]);
  assert.equal(turn.result.exitReason, "LENGTH_LIMIT", turn.result.error);
  assert.equal(turn.result.text, "The first part of an answer that filled the window");
  // Not the output limit: a larger max_tokens would not help, a compaction would.
  assert.match(turn.result.error ?? "", /context window filled up/);
});

Deno.test("runTurn() retries an Ollama stream cut off after chunks with an empty finish reason", async () => {
  const turn = await turnOver("openai", ["ollama_empty_finish_reason_cut.sse", "plain_answer.sse"]);
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  assert.equal(turn.result.text, "Two files.");
  const retries = turn.events.filter((event) => event.type === "retry");
  assert.deepEqual(retries.map((event) => event.reason), [
    "Model API stream ended early: no finish reason",
  ]);
});

// Hugging Face TGI's error events.

Deno.test("runTurn() retries TGI's overloaded error event", async () => {
  const turn = await turnOver("openai", ["tgi_overloaded_error.sse", "plain_answer.sse"]);
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  assert.equal(turn.result.text, "Two files.");
  const retries = turn.events.filter((event) => event.type === "retry");
  assert.deepEqual(retries.map((event) => event.reason), [
    "Model API stream error: Model is overloaded",
  ]);
});

Deno.test("createOpenAiChatProvider() marks TGI's input validation error a context overflow", async () => {
  const events = await streamOnce("openai", "tgi_validation_error.sse");
  assert.deepEqual(events, [{
    type: "error",
    kind: "client",
    message: "Model API stream error: Input validation error: `inputs` tokens + " +
      "`max_new_tokens` must be <= 4096. Given: 3990 `inputs` tokens and 1024 `max_new_tokens`",
    // The loop compacts the conversation and asks again once.
    contextOverflow: true,
  }]);
});

// Call ids and arguments of servers that bend the protocol.

Deno.test("runTurn() runs each Ollama call without parameters sent under one index", async () => {
  const turn = await turnOver("openai", ["ollama_no_argument_calls.sse", "plain_answer.sse"], {
    rejectInvalidArguments: true,
  });
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  assert.deepEqual(turn.ran, ["pwd", "pwd"]);
  const calls = sentBackCalls(turn.bodies);
  assert.deepEqual(calls.map((call) => [call.id, call.function.name, call.function.arguments]), [
    ["call_5fq2ml0c", "pwd", "{}"],
    ["call_x8v3nd7r", "pwd", "{}"],
  ]);
});

Deno.test("runTurn() keeps a call's first id when Poolside sends another on later pieces", async () => {
  const turn = await turnOver("openai", ["poolside_call_id_changes.sse", "plain_answer.sse"]);
  assert.equal(turn.result.exitReason, "COMPLETED", turn.result.error);
  assert.deepEqual(turn.ran, ["bash echo A > a1.txt"]);
  const calls = sentBackCalls(turn.bodies);
  assert.deepEqual(calls.map((call) => call.id), ["call_Qm4TnY8cVb2LxR7s"]);
  const results = (turn.bodies[1].messages as Record<string, unknown>[])
    .filter((message) => message.role === "tool")
    .map((message) => message.tool_call_id);
  assert.deepEqual(results, ["call_Qm4TnY8cVb2LxR7s"]);
});

// Answers cut off by the context window.

Deno.test("runTurn() says the context window filled when Anthropic stops for it", async () => {
  const turn = await turnOver("anthropic", ["anthropic_context_window_exceeded.sse"]);
  assert.equal(turn.result.exitReason, "LENGTH_LIMIT");
  assert.equal(
    turn.result.error,
    "The model's context window filled up before it finished its answer",
  );
  assert.equal(turn.result.text, "The summary so far");
});

Deno.test("createOpenAiChatProvider() names Mistral's model_length as the stop reason", async () => {
  const done = (await streamOnce("openai", "mistral_model_length.sse")).at(-1);
  assert.equal(done?.type === "done" ? done.finishReason : done?.type, "length");
  assert.equal(done?.type === "done" ? done.stopReason : undefined, "model_length");
});
