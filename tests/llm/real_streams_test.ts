/**
 * Replies real Chat Completions servers send (tests/fixtures/streams/*.sse), served as they
 * came, through the real provider and the agent loop: what the turn makes of them, and what
 * the next request sends back.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { z } from "zod";
import { runTurn, type TurnResult } from "../../src/agent/loop.ts";
import type { Message, Usage } from "../../src/core/messages.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { defineTool } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";

const FIXTURES = join(dirname(new URL(import.meta.url).pathname), "../fixtures/streams");

interface Served {
  result: TurnResult;
  /** The JSON bodies the server received, in order. */
  bodies: Record<string, unknown>[];
  /** What the loop recorded: each message with its call's usage. */
  recorded: { message: Message; usage?: Usage }[];
  /** The commands the `bash` stand-in was called with. */
  commands: string[];
}

/** Runs one turn against a server that answers request i with fixture `streams[i]`. */
async function turnOver(streams: string[]): Promise<Served> {
  const bodies: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    bodies.push(await req.json());
    const name = streams[bodies.length - 1];
    if (name === undefined) return new Response("no more streams", { status: 500 });
    const body = await Deno.readTextFile(join(FIXTURES, name));
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  const commands: string[] = [];
  const bash = defineTool({
    name: "bash",
    description: "runs a command (a stand-in that records it)",
    parameters: z.strictObject({ command: z.string() }),
    readOnly: false,
    runsIn: "host",
    paths: () => [],
    execute: (args) => {
      commands.push(args.command);
      return Promise.resolve({ output: "a.ts\nb.ts" });
    },
  });
  const recorded: Served["recorded"] = [];
  try {
    const result = await runTurn({
      messages: [{ role: "user", content: "list the files" }],
      provider: createOpenAiChatProvider({ baseUrl: `http://127.0.0.1:${server.addr.port}/v1` }),
      model: "any",
      tools: new ToolRegistry([bash]),
      workspace: "/nonexistent",
      emit: () => {},
      onMessage: (message, usage) => recorded.push(usage ? { message, usage } : { message }),
    });
    return { result, bodies, recorded, commands };
  } finally {
    await server.shutdown();
  }
}

/** The assistant message of the second request, as sent on the wire. */
function sentBack(bodies: Record<string, unknown>[]): Record<string, unknown> {
  const messages = bodies[1].messages as Record<string, unknown>[];
  const assistant = messages.find((message) => message.role === "assistant");
  assert.ok(assistant !== undefined, "the second request has no assistant message");
  return assistant;
}

Deno.test("runTurn() shows an OpenAI refusal as the answer and records its usage", async () => {
  const { result, recorded } = await turnOver(["openai_refusal.sse"]);
  assert.equal(result.exitReason, "COMPLETED", result.error);
  assert.equal(result.text, "I'm sorry, I can't help with that.");
  assert.equal(recorded.length, 1);
  assert.equal(recorded[0].message.content, "I'm sorry, I can't help with that.");
  assert.deepEqual(recorded[0].usage, {
    inputTokens: 31,
    outputTokens: 10,
    cachedTokens: 0,
    reasoningTokens: 0,
  });
});

Deno.test("runTurn() sends DeepSeek's reasoning_content back with its tool-call message", async () => {
  const { result, bodies, commands } = await turnOver([
    "deepseek_thinking_tools.sse",
    "plain_answer.sse",
  ]);
  assert.equal(result.exitReason, "COMPLETED", result.error);
  assert.deepEqual(commands, ["ls"]);
  const assistant = sentBack(bodies);
  assert.equal(assistant.reasoning_content, "The user wants the files; I will list them.");
  assert.equal(assistant.reasoning_details, undefined);
  const tool = (bodies[1].messages as Record<string, unknown>[]).at(-1);
  assert.deepEqual(tool, {
    role: "tool",
    tool_call_id: "call_00_Jq8gW2",
    content: "SUCCEEDED\na.ts\nb.ts",
  });
});

Deno.test("runTurn() sends Gemini's thought signature back with the tool call", async () => {
  const { result, bodies, commands } = await turnOver([
    "gemini_thought_signature.sse",
    "plain_answer.sse",
  ]);
  assert.equal(result.exitReason, "COMPLETED", result.error);
  assert.deepEqual(commands, ["ls"]);
  const calls = sentBack(bodies).tool_calls as Record<string, unknown>[];
  assert.deepEqual(calls, [{
    id: "function-call-11436452094402346311",
    type: "function",
    function: { name: "bash", arguments: '{"command":"ls"}' },
    extra_content: { google: { thought_signature: "CiQBVKhc7p0hQ1Yx0ZfdmVuZGVkLXNpZ25hdHVyZQ==" } },
  }]);
  const messages = bodies[1].messages as Record<string, unknown>[];
  assert.equal(messages.at(-1)?.tool_call_id, "function-call-11436452094402346311");
});

Deno.test("runTurn() sends OpenRouter's reasoning_details back whole, in order", async () => {
  const { result, bodies } = await turnOver([
    "openrouter_reasoning_details.sse",
    "plain_answer.sse",
  ]);
  assert.equal(result.exitReason, "COMPLETED", result.error);
  const assistant = sentBack(bodies);
  assert.deepEqual(assistant.reasoning_details, [{
    type: "reasoning.text",
    text: "Let me list the files.",
    signature: "EqQBCkgIBxABGAIqQKz0c2lnbmF0dXJl",
    format: "anthropic-claude-v1",
    index: 0,
  }]);
  assert.equal(assistant.reasoning_content, undefined);
});

Deno.test("runTurn() ends LENGTH_LIMIT with usage kept when an error chunk follows finish_reason length", async () => {
  const { result, recorded } = await turnOver(["openrouter_error_after_length.sse"]);
  assert.equal(result.exitReason, "LENGTH_LIMIT", result.error);
  assert.equal(result.text, "The first half of a long answer");
  assert.equal(result.usage.outputTokens, 64);
  assert.equal(recorded[0].usage?.inputTokens, 512);
});

for (const stream of ["split_tool_name.sse", "repeated_tool_name.sse"]) {
  Deno.test(`runTurn() runs a tool call whose id and name stream in pieces (${stream})`, async () => {
    const { result, bodies, commands } = await turnOver([stream, "plain_answer.sse"]);
    assert.equal(result.exitReason, "COMPLETED", result.error);
    assert.deepEqual(commands, ["ls"]);
    const calls = sentBack(bodies).tool_calls as { id: string; function: { name: string } }[];
    assert.deepEqual(calls.map((call) => [call.id, call.function.name]), [["call_7f3a", "bash"]]);
  });
}
