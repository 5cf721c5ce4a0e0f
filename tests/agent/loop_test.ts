import { deepEqual, ok } from "node:assert/strict";
import { z } from "zod";
import { runTurn, type RunTurnOptions } from "../../src/agent/loop.ts";
import type { AgentEvent } from "../../src/core/events.ts";
import type { Message, ToolMessage } from "../../src/core/messages.ts";
import { type Script, ScriptedProvider } from "../../src/llm/scripted.ts";
import { defineTool } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";

const USER: Message[] = [{ role: "user", content: "do it" }];

function call(name: string, args: unknown, id = `call_${name}`) {
  return { id, name, arguments: typeof args === "string" ? args : JSON.stringify(args) };
}

/** A tool that records its calls and answers with its argument, or fails when told to. */
function echoTool(name: string, log: string[], options: { readOnly?: boolean } = {}) {
  return defineTool({
    name,
    description: `echo (${name})`,
    parameters: z.strictObject({ value: z.string(), fail: z.boolean().optional() }),
    readOnly: options.readOnly ?? false,
    runsIn: "host",
    paths: () => [],
    execute: (args) => {
      log.push(`${name}:${args.value}`);
      if (args.fail) return Promise.reject(new Error(`failed on ${args.value}`));
      return Promise.resolve({ output: `echo ${args.value}` });
    },
  });
}

async function run(script: Script, extra: Partial<RunTurnOptions> = {}) {
  const events: AgentEvent[] = [];
  const log: string[] = [];
  const provider = new ScriptedProvider(script);
  const tools = extra.tools ?? new ToolRegistry([echoTool("echo", log)]);
  const result = await runTurn({
    messages: USER,
    provider,
    model: "scripted",
    tools,
    workspace: "/nonexistent",
    emit: (e) => events.push(e),
    ...extra,
  });
  return { result, events, log, provider };
}

Deno.test("runTurn() completes when the model answers with text only", async () => {
  const { result, events } = await run([{ text: "All done." }]);
  deepEqual(result.exitReason, "COMPLETED");
  deepEqual(result.text, "All done.");
  deepEqual(result.rounds, 1);
  deepEqual(events[0].type, "turn_start");
  deepEqual(events.at(-1)?.type, "turn_end");
  const streamed = events.filter((e) => e.type === "text_delta").map((e) => e.text).join("");
  deepEqual(streamed, "All done.");
});

Deno.test("runTurn() feeds each observation back tied to its tool_call_id", async () => {
  const { result, log, provider } = await run([
    { text: "Echoing.", toolCalls: [call("echo", { value: "a" }, "c1")] },
    { toolCalls: [call("echo", { value: "b" }, "c2")] },
    { text: "Finished." },
  ]);
  deepEqual(result.exitReason, "COMPLETED");
  deepEqual(result.rounds, 3);
  deepEqual(result.toolCalls, 2);
  deepEqual(log, ["echo:a", "echo:b"]);
  const toolMessages = result.messages.filter((m): m is ToolMessage => m.role === "tool");
  deepEqual(toolMessages.map((m) => [m.toolCallId, m.content]), [
    ["c1", "SUCCEEDED\necho a"],
    ["c2", "SUCCEEDED\necho b"],
  ]);
  // The third request carried both rounds of history.
  deepEqual(provider.requests[2].messages.length, 5);
  deepEqual(provider.requests[0].tools[0].name, "echo");
});

Deno.test("runTurn() stops with MAX_ROUNDS after the configured number of model calls", async () => {
  const { result } = await run(
    (_req, i) => ({ toolCalls: [call("echo", { value: String(i) }, `c${i}`)] }),
    { maxRounds: 3 },
  );
  deepEqual(result.exitReason, "MAX_ROUNDS");
  deepEqual(result.rounds, 3);
  deepEqual(result.toolCalls, 3);
});

Deno.test("runTurn() stops with REPEATED_FAILURE when the identical call fails 3 times", async () => {
  const failing = call("echo", { value: "x", fail: true });
  const { result, log } = await run((_req, i) => ({
    toolCalls: [{ ...failing, id: `c${i}` }],
  }));
  deepEqual(result.exitReason, "REPEATED_FAILURE");
  deepEqual(result.rounds, 3);
  deepEqual(log.length, 3);
  ok(result.error?.includes('"echo"'));
});

Deno.test("runTurn() resets the failure streak when the call changes or succeeds", async () => {
  const replies = [
    { toolCalls: [call("echo", { value: "x", fail: true }, "c1")] },
    { toolCalls: [call("echo", { fail: true, value: "x" }, "c2")] }, // same call, other key order
    { toolCalls: [call("echo", { value: "ok" }, "c3")] },
    { toolCalls: [call("echo", { value: "x", fail: true }, "c4")] },
    { toolCalls: [call("echo", { value: "x", fail: true }, "c5")] },
    { text: "gave up politely" },
  ];
  const { result } = await run(replies);
  deepEqual(result.exitReason, "COMPLETED");
  deepEqual(result.toolCalls, 5);
});

Deno.test("runTurn() reports EMPTY_RESPONSE for a reply without text or tool calls", async () => {
  const { result } = await run([{ text: "" }]);
  deepEqual(result.exitReason, "EMPTY_RESPONSE");
});

Deno.test("runTurn() reports LENGTH_LIMIT and does not run cut-off tool calls", async () => {
  const { result, log } = await run([
    { text: "partial", toolCalls: [call("echo", { value: "a" })], finishReason: "length" },
  ]);
  deepEqual(result.exitReason, "LENGTH_LIMIT");
  deepEqual(log, []);
  deepEqual(result.messages.at(-1), { role: "assistant", content: "partial" });
});

Deno.test("runTurn() ends CLIENT_ERROR when the answer was refused, keeping its text and skipping its calls", async () => {
  const { result, log } = await run([
    { text: "Here is how", toolCalls: [call("echo", { value: "a" })], finishReason: "refusal" },
  ]);
  deepEqual(result.exitReason, "CLIENT_ERROR");
  deepEqual(
    result.error,
    'The model API stopped the answer as "refusal" (a content filter or the model\'s refusal): ' +
      "rephrase the request",
  );
  deepEqual(log, []);
  deepEqual(result.messages.at(-1), { role: "assistant", content: "Here is how" });
});

Deno.test("runTurn() sends a paused turn back until the model goes on, within the round limit", async () => {
  const paused = await run([
    { text: "Searching", finishReason: "pause" },
    { finishReason: "pause" },
    { text: "Found it." },
  ]);
  deepEqual(paused.result.exitReason, "COMPLETED");
  deepEqual(paused.result.rounds, 3);
  deepEqual(paused.provider.requests[1].messages.at(-1), {
    role: "assistant",
    content: "Searching",
  });
  deepEqual(paused.provider.requests[2].messages, paused.provider.requests[1].messages);
  const endless = await run(() => ({ finishReason: "pause" }), { maxRounds: 2 });
  deepEqual(endless.result.exitReason, "MAX_ROUNDS");
});

Deno.test("runTurn() reports CLIENT_ERROR when the provider fails", async () => {
  const { result } = await run([]);
  deepEqual(result.exitReason, "CLIENT_ERROR");
  ok(result.error && result.error.length > 0);
});

Deno.test("runTurn() answers invalid JSON arguments with INVALID_ARGUMENTS and skips the tool", async () => {
  const { result, log } = await run([
    { toolCalls: [call("echo", '{"value": "a"', "c1")] },
    { toolCalls: [call("echo", { value: 1 }, "c2")] },
    { text: "ok" },
  ]);
  deepEqual(log, []);
  const contents = result.messages.filter((m) => m.role === "tool").map((m) => m.content);
  ok(contents[0].startsWith("ERROR[INVALID_ARGUMENTS]"), contents[0]);
  ok(contents[1].startsWith("ERROR[INVALID_ARGUMENTS]"), contents[1]);
});

Deno.test("runTurn() answers an unknown tool with UNKNOWN_TOOL naming the known ones", async () => {
  const { result } = await run([{ toolCalls: [call("nope", {})] }, { text: "ok" }]);
  const content = result.messages.find((m) => m.role === "tool")?.content ?? "";
  ok(content.startsWith("ERROR[UNKNOWN_TOOL]"), content);
  ok(content.includes('"echo"'));
});

Deno.test("runTurn() names an unknown tool made visible, never as a tool it could be read as", async () => {
  const { result } = await run([{ toolCalls: [call("ec\x1b[2Jho", {})] }, { text: "ok" }]);
  const content = result.messages.find((m) => m.role === "tool")?.content ?? "";
  ok(content.includes('There is no tool "ec␛[2Jho"'), content);
});

Deno.test("runTurn() is CANCELLED before the model call when the signal has fired", async () => {
  const controller = new AbortController();
  controller.abort();
  const { result, provider } = await run([{ text: "never" }], { signal: controller.signal });
  deepEqual(result.exitReason, "CANCELLED");
  deepEqual(provider.requests.length, 0);
});

Deno.test("runTurn() passes the signal into tools and ends CANCELLED", async () => {
  const controller = new AbortController();
  const waiter = defineTool({
    name: "wait",
    description: "waits until cancelled",
    parameters: z.strictObject({}),
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute: (_args, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener("abort", () => reject(new Error("aborted")));
        controller.abort();
      }),
  });
  const { result } = await run([{ toolCalls: [call("wait", {})] }, { text: "never" }], {
    signal: controller.signal,
    tools: new ToolRegistry([waiter]),
  });
  deepEqual(result.exitReason, "CANCELLED");
  deepEqual(result.rounds, 1);
  const content = result.messages.find((m) => m.role === "tool")?.content ?? "";
  ok(content.startsWith("ERROR[CANCELLED]"), content);
});

Deno.test("runTurn() runs read-only calls concurrently and others in order", async () => {
  const order: string[] = [];
  // Each read-only call waits until both have started: this only finishes if they overlap.
  let started = 0;
  let release!: () => void;
  const bothStarted = new Promise<void>((resolve) => release = resolve);
  const reader = defineTool({
    name: "peek",
    description: "read-only",
    parameters: z.strictObject({ value: z.string() }),
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute: async (args) => {
      order.push(`peek-start:${args.value}`);
      if (++started === 2) release();
      await bothStarted;
      order.push(`peek-end:${args.value}`);
      return { output: args.value };
    },
  });
  const writer = defineTool({
    name: "poke",
    description: "writes",
    parameters: z.strictObject({ value: z.string() }),
    readOnly: false,
    runsIn: "host",
    paths: () => [],
    execute: async (args) => {
      order.push(`poke-start:${args.value}`);
      await new Promise((r) => setTimeout(r, 5));
      order.push(`poke-end:${args.value}`);
      return { output: args.value };
    },
  });
  const { result } = await run([
    {
      toolCalls: [
        call("poke", { value: "1" }, "a"),
        call("poke", { value: "2" }, "b"),
        call("peek", { value: "x" }, "c"),
        call("peek", { value: "y" }, "d"),
      ],
    },
    { text: "done" },
  ], { tools: new ToolRegistry([reader, writer]) });
  deepEqual(result.exitReason, "COMPLETED");
  deepEqual(order.slice(0, 4), ["poke-start:1", "poke-end:1", "poke-start:2", "poke-end:2"]);
  deepEqual(order.slice(4, 6).sort(), ["peek-start:x", "peek-start:y"]);
  deepEqual(
    result.messages.filter((m) => m.role === "tool").map((m) => (m as ToolMessage).toolCallId),
    ["a", "b", "c", "d"],
  );
});

Deno.test("runTurn() emits tool_start and tool_end for every call", async () => {
  const { events } = await run([
    { toolCalls: [call("echo", { value: "a" }, "c1")] },
    { text: "done" },
  ]);
  const start = events.find((e) => e.type === "tool_start");
  const end = events.find((e) => e.type === "tool_end");
  if (start?.type !== "tool_start" || end?.type !== "tool_end") throw new Error("no tool events");
  deepEqual(start.args, { value: "a" });
  deepEqual(end.callId, "c1");
  deepEqual(end.observation.status, "SUCCEEDED");
});

Deno.test("runTurn() reports every message it adds, in order, the assistant's with its usage", async () => {
  const added: Array<{ role: string; usage: boolean }> = [];
  const { result } = await run([
    { toolCalls: [call("echo", { value: "a" }, "c1"), call("echo", { value: "b" }, "c2")] },
    { text: "done" },
  ], { onMessage: (message, usage) => added.push({ role: message.role, usage: !!usage }) });
  deepEqual(added, [
    { role: "assistant", usage: true },
    { role: "tool", usage: false },
    { role: "tool", usage: false },
    { role: "assistant", usage: true },
  ]);
  // Exactly what the turn appended to the conversation it started with.
  deepEqual(result.messages.slice(USER.length).map((m) => m.role), added.map((a) => a.role));
});

Deno.test("runTurn() lets prepare() replace the conversation before each model call", async () => {
  const seen: number[] = [];
  const { provider, result } = await run([
    { toolCalls: [call("echo", { value: "a" })] },
    { text: "done" },
  ], {
    prepare: (messages) => {
      seen.push(messages.length);
      // The second call gets a compacted conversation: a summary instead of the history.
      return Promise.resolve(
        seen.length === 2 ? [{ role: "user", content: "summary of it all" }] : undefined,
      );
    },
  });
  deepEqual(seen, [1, 3]);
  deepEqual(result.exitReason, "COMPLETED");
  deepEqual(provider.requests[1].messages.map((m) => m.content), ["summary of it all"]);
});

Deno.test("runTurn() streams thinking, keeps it on the message and passes the level on", async () => {
  const { result, events, provider } = await run([{ thinking: "let me see", text: "answer" }], {
    thinking: "high",
  });
  deepEqual(provider.requests[0].thinking, "high");
  const thought = events.filter((e) => e.type === "thinking_delta").map((e) =>
    e.type === "thinking_delta" ? e.text : ""
  ).join("");
  deepEqual(thought, "let me see");
  const answer = result.messages.at(-1);
  ok(answer?.role === "assistant");
  deepEqual(answer.content, "answer", "thinking is not part of the answer");
  deepEqual(answer.thinking, [{ api: "openai", text: "let me see" }]);
});

Deno.test("runTurn() forwards retries and model switches, and sums cost by who answered", async () => {
  const usage = { inputTokens: 10, outputTokens: 5, cachedTokens: 0, reasoningTokens: 0 };
  let call = 0;
  const provider: RunTurnOptions["provider"] = {
    name: "routed",
    async *stream() {
      call++;
      if (call === 1) {
        yield { type: "retry", attempt: 1, delayMs: 0, reason: "HTTP 500 from model API" };
        yield {
          type: "fallback",
          from: "a/m1",
          to: "b/m2",
          provider: "b",
          model: "m2",
          reason: "HTTP 500 from model API",
        };
        yield {
          type: "done",
          message: { role: "assistant", content: "", toolCalls: [call_("echo", { value: "x" })] },
          finishReason: "tool_calls",
          usage,
          provider: "b",
          model: "m2",
          cost: 0.25,
        };
        return;
      }
      yield {
        type: "done",
        message: { role: "assistant", content: "done" },
        finishReason: "stop",
        usage,
        provider: "b",
        model: "m2",
        cost: 0.5,
      };
    },
  };
  const answered: unknown[] = [];
  const { result, events } = await run([], {
    provider,
    onMessage: (message, _usage, by) => {
      if (message.role === "assistant") answered.push(by);
    },
  });
  deepEqual(result.exitReason, "COMPLETED");
  deepEqual(result.cost, 0.75);
  const end = events.at(-1);
  ok(end?.type === "turn_end");
  deepEqual(end.cost, 0.75);
  deepEqual(
    events.filter((e) => e.type === "retry" || e.type === "model_switch").map((e) => e.type),
    ["retry", "model_switch"],
  );
  const retry = events.find((e) => e.type === "retry");
  ok(retry?.type === "retry");
  deepEqual(retry.round, 1);
  deepEqual(answered, [
    { provider: "b", model: "m2", cost: 0.25 },
    { provider: "b", model: "m2", cost: 0.5 },
  ]);
});

function call_(name: string, args: unknown) {
  return call(name, args, `id_${name}`);
}

Deno.test("runTurn() adds steering messages after tool results, before the next model call", async () => {
  const queue = ["also check the docs"];
  const added: Message[] = [];
  const { result, events, provider } = await run([
    { toolCalls: [call("echo", { value: "a" })] },
    { text: "Done, docs checked." },
  ], {
    steering: () => queue.splice(0),
    onMessage: (message) => added.push(message),
  });
  deepEqual(result.exitReason, "COMPLETED");
  // The second request ends with the tool result and then the steering message.
  const second = provider.requests[1].messages;
  deepEqual(second.at(-2)?.role, "tool");
  deepEqual(second.at(-1), { role: "user", content: "also check the docs" });
  deepEqual(added.map((m) => m.role), ["assistant", "tool", "user", "assistant"]);
  const steering = events.filter((e) => e.type === "steering");
  deepEqual(steering, [{ type: "steering", round: 1, text: "also check the docs" }]);
  deepEqual(queue, []);
});

Deno.test("runTurn() leaves messages queued after the last model call to the caller", async () => {
  let asked = 0;
  const { result, provider } = await run([{ text: "Done." }], {
    steering: () => {
      asked++;
      return [];
    },
  });
  deepEqual(result.exitReason, "COMPLETED");
  deepEqual(provider.requests.length, 1);
  // No tool round happened, so there was no model boundary to steer at.
  deepEqual(asked, 0);
});

Deno.test("runTurn() calls onAnswering once, when the model's first output arrives", async () => {
  const order: string[] = [];
  const { result } = await run([
    { toolCalls: [call("echo", { value: "a" }, "c1")] },
    { text: "Finished." },
  ], {
    emit: (e) => order.push(e.type),
    onAnswering: () => order.push("answering"),
  });
  deepEqual(result.exitReason, "COMPLETED");
  // A reply of tool calls alone counts: the hook fires before its message, not before the call.
  deepEqual(order.filter((type) => type === "answering").length, 1);
  deepEqual(order.slice(0, 3), ["turn_start", "round_start", "answering"]);
});

Deno.test("runTurn() keeps the bytes of the newest 20 images only, however often a tool returns one", async () => {
  let n = 0;
  const imageTool = defineTool({
    name: "shot",
    description: "returns an image",
    parameters: z.strictObject({}),
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute: () => {
      n++;
      const hash = n.toString(16).padStart(64, "0");
      return Promise.resolve({
        output: `image ${n}`,
        images: [{ mediaType: "image/png" as const, data: `DATA${n}`, sha256: hash }],
      });
    },
  });
  const recorded: Message[] = [];
  const script: Script = [
    ...Array.from({ length: 25 }, (_, i) => ({ toolCalls: [call("shot", {}, `c${i}`)] })),
    { text: "done" },
  ];
  const { result, provider } = await run(script, {
    tools: new ToolRegistry([imageTool]),
    maxRounds: 30,
    onMessage: (message) => recorded.push(message),
  });
  deepEqual(result.exitReason, "COMPLETED");
  const held = result.messages.flatMap((m) => m.role === "tool" ? m.images ?? [] : []);
  deepEqual(held.map((image) => image.data), Array.from({ length: 20 }, (_, i) => `DATA${i + 6}`));
  const notes = result.messages.filter((m) => m.content.includes("an older image was left out"));
  deepEqual(notes.length, 5);
  // Every image reached the recording (the session stores it) before it was let go.
  deepEqual(recorded.filter((m) => m.role === "tool" && m.images?.length).length, 25);
  // The last request carried the newest 20.
  const last = provider.requests.at(-1)!.messages;
  deepEqual(last.flatMap((m) => m.role === "tool" ? m.images ?? [] : []).length, 20);
});

Deno.test("runTurn() holds one reply's newest 20 images only, and runs at most 10 read-only calls at once", async () => {
  let running = 0;
  let most = 0;
  const imageTool = defineTool({
    name: "shot",
    description: "returns an image",
    parameters: z.strictObject({ n: z.number() }),
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute: async (args) => {
      running++;
      most = Math.max(most, running);
      // Later calls finish sooner, so results arrive out of call order.
      await new Promise((r) => setTimeout(r, (args.n * 7) % 5));
      running--;
      const hash = args.n.toString(16).padStart(64, "0");
      return {
        output: `image ${args.n}`,
        images: [{ mediaType: "image/png" as const, data: `DATA${args.n}`, sha256: hash }],
      };
    },
  });
  const recorded: Message[] = [];
  const calls = Array.from({ length: 60 }, (_, i) => call("shot", { n: i + 1 }, `c${i + 1}`));
  const { result, provider } = await run([{ toolCalls: calls }, { text: "done" }], {
    tools: new ToolRegistry([imageTool]),
    onMessage: (message) => recorded.push(message),
  });
  deepEqual(result.exitReason, "COMPLETED");
  ok(most <= 10 && most > 1, `at most 10 calls at once, and more than one: ${most}`);
  const tools = recorded.filter((m) => m.role === "tool") as ToolMessage[];
  deepEqual(tools.map((m) => m.toolCallId), calls.map((c) => c.id));
  // The round let go of the older 40 before its results were added: the recording has notes.
  deepEqual(
    tools.flatMap((m) => m.images ?? []).map((image) => image.data),
    Array.from({ length: 20 }, (_, i) => `DATA${i + 41}`),
  );
  deepEqual(tools.filter((m) => m.content.includes("an older image was left out")).length, 40);
  deepEqual(
    provider.requests.at(-1)!.messages.flatMap((m) => m.role === "tool" ? m.images ?? [] : [])
      .length,
    20,
  );
});
