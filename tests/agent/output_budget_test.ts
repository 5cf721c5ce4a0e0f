/**
 * The caps on what the model's answers hold: one answer and all of a turn's. A server streaming
 * huge answers, each with a tool call so the turn goes on, grew tern's memory and session file
 * every round until V8 ran out of memory (probe: 200 MB of text plus a `glob` call per reply).
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { z } from "zod";
import { runTurn, type RunTurnOptions } from "../../src/agent/loop.ts";
import {
  answerBytes,
  MAX_ANSWER_BYTES,
  MAX_TURN_OUTPUT_BYTES,
} from "../../src/agent/output_budget.ts";
import { recordMessages } from "../../src/agent/session_turn.ts";
import type { AgentEvent } from "../../src/core/events.ts";
import type { AssistantMessage, Message } from "../../src/core/messages.ts";
import { type Script, ScriptedProvider } from "../../src/llm/scripted.ts";
import type { Provider, StreamEvent } from "../../src/llm/types.ts";
import { MAX_LINE_BYTES } from "../../src/session/_lines.ts";
import { Session } from "../../src/session/session.ts";
import { defineTool } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";

const MIB = 1024 * 1024;

function echoTool(log: string[]) {
  return defineTool({
    name: "echo",
    description: "echo",
    parameters: z.strictObject({ value: z.string() }),
    readOnly: false,
    runsIn: "host",
    paths: () => [],
    execute: (args) => {
      log.push(args.value);
      return Promise.resolve({ output: `echo ${args.value.length}` });
    },
  });
}

/** Every reply: `text`, and a call with a new argument so the turn goes on. */
function flooding(text: string): Script {
  return (_request, index) => ({
    text,
    toolCalls: [{
      id: `c${index}`,
      name: "echo",
      arguments: JSON.stringify({ value: `${index}` }),
    }],
  });
}

async function run(provider: Provider, extra: Partial<RunTurnOptions> = {}) {
  const events: AgentEvent[] = [];
  const recorded: Message[] = [];
  const log: string[] = [];
  const result = await runTurn({
    messages: [{ role: "user", content: "do it" }],
    provider,
    model: "scripted",
    tools: new ToolRegistry([echoTool(log)]),
    workspace: "/nonexistent",
    emit: (event) => events.push(event),
    onMessage: (message) => recorded.push(message),
    ...extra,
  });
  return { result, events, recorded, log };
}

/** Text deltas of `piece`, up to `count` of them, then the answer; says how far it was read. */
function streaming(piece: string, count: number) {
  const state = { pulled: 0, closed: false };
  const provider: Provider = {
    name: "streaming",
    async *stream(): AsyncGenerator<StreamEvent> {
      try {
        for (; state.pulled < count; state.pulled++) {
          yield { type: "text_delta", text: piece };
          await Promise.resolve();
        }
        const message: AssistantMessage = { role: "assistant", content: piece.repeat(count) };
        yield { type: "done", message, finishReason: "stop" };
      } finally {
        state.closed = true;
      }
    },
  };
  return { provider, state };
}

/** Every call's result follows its call: what a resumed session sends is well formed. */
function assertWellFormed(messages: Message[]): void {
  const open = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant") {
      equal(open.size, 0, "an assistant message came before the results of earlier calls");
      for (const call of message.toolCalls ?? []) open.add(call.id);
    }
    if (message.role === "tool") ok(open.delete(message.toolCallId), "a result without a call");
  }
  equal(open.size, 0, "calls without results");
}

Deno.test("runTurn() ends CLIENT_ERROR once the turn's answers pass the turn budget, the rounds before kept whole", async () => {
  const text = "x".repeat(8_000);
  const { result, recorded, log } = await run(new ScriptedProvider(flooding(text)), {
    outputLimits: { answerBytes: 10_000, turnBytes: 50_000 },
  });
  // Six answers of about 8.1 KB fit in 50,000 bytes; the seventh does not and is not kept.
  equal(result.exitReason, "CLIENT_ERROR");
  equal(result.rounds, 7);
  match(result.error ?? "", /^The model's answers in this turn passed 50000 bytes together/);
  deepEqual(log, ["0", "1", "2", "3", "4", "5"]);
  equal(recorded.length, 12);
  equal(recorded.at(-1)?.role, "tool");
  assertWellFormed(result.messages);
  const kept = recorded.filter((m): m is AssistantMessage => m.role === "assistant");
  ok(kept.reduce((sum, m) => sum + answerBytes(m), 0) <= 50_000);
});

Deno.test("runTurn() stops reading an answer whose streamed text passes the answer cap and keeps none of it", async () => {
  const { provider, state } = streaming("y".repeat(1_000), 1_000);
  const { result, events, recorded } = await run(provider, {
    outputLimits: { answerBytes: 10_000 },
  });
  equal(result.exitReason, "CLIENT_ERROR");
  equal(
    result.error,
    "The model's answer passed 10000 bytes: tern stopped reading it and ended the turn",
  );
  // The eleventh delta passed the cap: the stream was left there and closed.
  equal(state.pulled, 10);
  ok(state.closed);
  const shown = events.filter((e) => e.type === "text_delta").map((e) => e.text).join("");
  equal(shown.length, 10_000);
  deepEqual(recorded, []);
  equal(events.at(-1)?.type, "turn_end");
});

Deno.test("runTurn() refuses an answer whose tool-call arguments pass the answer cap, without running the call", async () => {
  const value = "z".repeat(20_000);
  const { result, recorded, log } = await run(
    new ScriptedProvider([
      { toolCalls: [{ id: "big", name: "echo", arguments: JSON.stringify({ value }) }] },
      { text: "done" },
    ]),
    { outputLimits: { answerBytes: 10_000 } },
  );
  equal(result.exitReason, "CLIENT_ERROR");
  match(result.error ?? "", /answer passed 10000 bytes/);
  deepEqual(log, []);
  deepEqual(recorded, []);
  equal(result.rounds, 1);
});

Deno.test("runTurn() measures answers in UTF-8 bytes, as the session writes them", async () => {
  // 3,000 characters of three bytes each: under a 5,000 cap by characters, over it by bytes.
  const { result, recorded } = await run(new ScriptedProvider([{ text: "漢".repeat(3_000) }]), {
    outputLimits: { answerBytes: 5_000 },
  });
  equal(result.exitReason, "CLIENT_ERROR");
  deepEqual(recorded, []);
  const message: AssistantMessage = {
    role: "assistant",
    content: 'aé漢😀\ud800\n"',
    thinking: [{ api: "anthropic", text: "ü", signature: "sig" }],
    toolCalls: [{ id: "c", name: "write", arguments: '{"content":"€"}' }],
  };
  equal(answerBytes(message), new TextEncoder().encode(JSON.stringify(message)).length);
});

Deno.test("runTurn() counts only the attempt that answered after a retry", async () => {
  const piece = "r".repeat(8_000);
  const provider: Provider = {
    name: "retrying",
    async *stream(): AsyncGenerator<StreamEvent> {
      yield { type: "text_delta", text: piece };
      yield { type: "retry", attempt: 1, delayMs: 0, reason: "dropped" };
      yield { type: "text_delta", text: piece };
      yield { type: "done", message: { role: "assistant", content: piece }, finishReason: "stop" };
    },
  };
  const { result } = await run(provider, { outputLimits: { answerBytes: 10_000 } });
  equal(result.exitReason, "COMPLETED");
});

Deno.test("MAX_ANSWER_BYTES fits an answer's entry in a session line with room; a turn holds several", () => {
  ok(MAX_ANSWER_BYTES * 4 <= MAX_LINE_BYTES);
  ok(MAX_TURN_OUTPUT_BYTES >= 4 * MAX_ANSWER_BYTES);
  // The longest real answer (128,000 tokens, 0.5 to 1 MB) is far below the answer cap.
  ok(MAX_ANSWER_BYTES >= 16 * MIB);
});

Deno.test("runTurn() with the default caps stops an answer streaming past 16 MiB", async () => {
  const { provider, state } = streaming("a".repeat(MIB), 40);
  const { result, recorded } = await run(provider);
  equal(result.exitReason, "CLIENT_ERROR");
  equal(
    result.error,
    "The model's answer passed 16 MiB: tern stopped reading it and ended the turn",
  );
  equal(state.pulled, 16);
  ok(state.closed);
  deepEqual(recorded, []);
});

Deno.test("runTurn() with the default caps ends a turn of 15 MiB answers in its fifth round, its session whole and resumable", async () => {
  const home = await Deno.makeTempDir({ prefix: "tern-home-" });
  try {
    const session = Session.create(home, { cwd: "/project", ternVersion: "test" });
    const task: Message = { role: "user", content: "do it" };
    session.append({ type: "message", message: task });
    const { result, log } = await run(new ScriptedProvider(flooding("b".repeat(15 * MIB))), {
      onMessage: recordMessages(session),
      // Without the budget the turn would go on to 25 rounds and use gigabytes: 6 end it.
      maxRounds: 6,
    });
    // 4 × 15 MiB fit in 64 MiB; the fifth answer passes it while it streams.
    equal(result.exitReason, "CLIENT_ERROR");
    equal(result.rounds, 5);
    match(result.error ?? "", /^The model's answers in this turn passed 64 MiB together/);
    deepEqual(log, ["0", "1", "2", "3"]);
    const path = session.path;
    session.close();

    const text = await Deno.readTextFile(path);
    ok(text.endsWith("\n"), "the session ends in a cut-off line");
    const lines = text.slice(0, -1).split("\n");
    for (const line of lines) {
      JSON.parse(line);
      ok(new TextEncoder().encode(line).length < MAX_LINE_BYTES);
    }
    // header, task, then an answer and its result for each of four rounds
    equal(lines.length, 10);
    const resumed = await Session.open(path);
    try {
      const messages = resumed.state().items.map((item) => item.message);
      equal(messages.length, 9);
      assertWellFormed(messages);
      equal(resumed.entries.length, 9, "resuming had to close calls left open");
    } finally {
      resumed.close();
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
