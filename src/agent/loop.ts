/**
 * The ReAct turn: model → text and/or tool calls → observations → next round, until the model
 * answers without tool calls or an exit reason applies. A plain function: the provider, the
 * tools and the event sink are passed in, so tests drive it with a scripted stream.
 */
import type { AgentEvent, EmitFn, ExitReason } from "../core/events.ts";
import {
  addUsage,
  type AssistantMessage,
  emptyUsage,
  type Message,
  type ToolCall,
  type ToolMessage,
  type Usage,
} from "../core/messages.ts";
import { type Observation, observationText } from "../core/observation.ts";
import { visibleText } from "../core/terminal_text.ts";
import { MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "../core/json_depth.ts";
import type { FinishReason, ModelRequest, Provider, ThinkingLevel } from "../llm/types.ts";
import { contextWindowFilled } from "../llm/wire_fields.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { phaseMark } from "../core/phase_marks.ts";
import { dropOlderImages, dropOlderResultImages } from "../core/image_budget.ts";
import { OutputBudget, type OutputLimits } from "./output_budget.ts";
import { progressUpdates } from "./progress_updates.ts";

export interface RunTurnOptions {
  /** The conversation so far, ending with the new user message. Not mutated. */
  messages: Message[];
  provider: Provider;
  model: string;
  tools: ToolRegistry;
  /** Absolute real path of the workspace the tools work in. */
  workspace: string;
  emit: EmitFn;
  /** Checked before every model call and passed into every model call and tool. */
  signal?: AbortSignal;
  /** Model calls allowed in this turn (default 25). */
  maxRounds?: number;
  /**
   * Most one answer and all of the turn's answers may hold, in UTF-8 bytes as JSON (defaults
   * `MAX_ANSWER_BYTES`, 16 MiB, and `MAX_TURN_OUTPUT_BYTES`, 64 MiB): an answer past either
   * is not read further nor kept, and the turn ends `CLIENT_ERROR`.
   */
  outputLimits?: Partial<OutputLimits>;
  maxTokens?: number;
  temperature?: number;
  /** How hard the model should think; the provider maps it per model. */
  thinking?: ThinkingLevel;
  /** The conversation's prompt-cache key (ModelRequest.cacheKey), the same every round. */
  cacheKey?: string;
  /**
   * Receives every message the turn adds to the conversation, in conversation order, the
   * assistant's with the usage of its model call and who answered. Called synchronously;
   * must not throw.
   */
  onMessage?: (message: Message, usage?: Usage, answeredBy?: AnsweredBy) => void;
  /**
   * Called before every model call with the conversation so far; a returned array replaces it
   * (compaction). With `force` (the server refused the request as over the model's context
   * window, once per turn), compacts whatever size the estimate gives. A returned
   * {@linkcode UnsendableRequest} ends the turn `CLIENT_ERROR` with its reason, nothing sent.
   * Must not throw: a failed compaction returns undefined.
   */
  prepare?: (
    messages: Message[],
    signal: AbortSignal,
    options?: { force?: boolean },
  ) => Promise<Message[] | UnsendableRequest | undefined>;
  /**
   * Steering: messages the person typed while the turn ran. Called at every model boundary
   * after tool results; each text returned is added as a user message before the next model
   * call. Texts still queued when the turn ends are the caller's (the next turn's input).
   */
  steering?: () => string[];
  /**
   * Called when the model would end the turn (a reply without tool calls): a text returned
   * (a Stop hook's reason) is added as a user message and the turn goes on, within
   * `maxRounds`. Must not throw.
   */
  beforeStop?: (signal: AbortSignal) => Promise<string | undefined>;
  /**
   * Called once per turn when the model starts answering (its first text, thinking or tool
   * call, or its whole reply): the request is out, the moment to preload what tool calls need
   * (the tool code, the sandbox). Must not throw.
   */
  onAnswering?: () => void;
  /**
   * Called when a tool call's name arrives in the model's stream, before its arguments (a
   * provider that sends the call whole calls it with the whole reply): the moment to ready
   * what that tool will need. Must not throw.
   */
  onToolCallStart?: (name: string) => void;
  /**
   * Given a round's tool results before they join the conversation; what it returns is what the
   * model gets, in the same order (`fitRound`: the round's results held to a share of the
   * model's window together). Must not throw.
   */
  fitResults?: (
    results: Array<{ callId: string; observation: Observation }>,
  ) => Promise<Observation[]>;
}

/**
 * What `prepare` returns for a request no compaction brings within the model's context window
 * (a huge system prompt, message or tool result): why, for the person, naming what to shorten.
 */
export interface UnsendableRequest {
  unsendable: string;
}

/** Who answered a model call and what it cost (USD; absent when prices are unknown). */
export interface AnsweredBy {
  provider?: string;
  model?: string;
  cost?: number;
  /** USD the prompt cache saved on the call (absent when prices are unknown). */
  saved?: number;
}

export interface TurnResult {
  exitReason: ExitReason;
  /** The last assistant text of the turn ("" when there was none). */
  text: string;
  /** Model calls made. */
  rounds: number;
  /** Tool calls answered with an observation. */
  toolCalls: number;
  usage: Usage;
  /** Summed cost in USD of the calls whose prices are known; absent when none were. */
  cost?: number;
  /** Summed USD the prompt cache saved on those calls; absent when none were priced. */
  saved?: number;
  /** The conversation after the turn: always well formed (every tool call has its result). */
  messages: Message[];
  error?: string;
  /**
   * A content filter or the model's own refusal ended the turn (exit reason `CLIENT_ERROR`), so
   * front ends with a word for it (ACP's `refusal`) can say so.
   */
  refused?: true;
}

/** The identical call failing this many times in a row ends the turn. */
const REPEATED_FAILURE_LIMIT = 3;
const DEFAULT_MAX_ROUNDS = 25;

/** Runs one turn to an exit reason. Never throws for model or tool failures. */
export async function runTurn(options: RunTurnOptions): Promise<TurnResult> {
  const { model, tools, emit } = options;
  const signal = options.signal ?? new AbortController().signal;
  const maxRounds = options.maxRounds ?? DEFAULT_MAX_ROUNDS;
  const messages = [...options.messages];
  const add = (message: Message, usage?: Usage, answeredBy?: AnsweredBy) => {
    messages.push(message);
    options.onMessage?.(message, usage, answeredBy);
    // Recorded (by hash) above: the turn holds the bytes of the newest images only.
    if ((message.role === "tool" || message.role === "user") && message.images?.length) {
      dropOlderImages(messages);
    }
  };
  const failures = new FailureStreak();
  const budget = new OutputBudget(options.outputLimits);
  let usage = emptyUsage();
  let cost: number | undefined;
  let saved: number | undefined;
  let rounds = 0;
  let toolCalls = 0;
  let text = "";
  let answering = false;
  const answered = () => {
    if (answering) return;
    answering = true;
    options.onAnswering?.();
  };

  const finish = (exitReason: ExitReason, error?: string): TurnResult => {
    const end: AgentEvent = { type: "turn_end", exitReason, text, rounds, toolCalls, usage };
    if (cost !== undefined) end.cost = cost;
    if (saved !== undefined) end.saved = saved;
    if (error !== undefined) end.error = error;
    emit(end);
    const result: TurnResult = { exitReason, text, rounds, toolCalls, usage, messages, error };
    if (cost !== undefined) result.cost = cost;
    if (saved !== undefined) result.saved = saved;
    return result;
  };

  emit({ type: "turn_start", model, maxRounds });
  let compactedForOverflow = false;
  while (rounds < maxRounds) {
    if (signal.aborted) return finish("CANCELLED", "Cancelled before the model call");
    const prepared = await options.prepare?.(messages, signal);
    if (prepared !== undefined && !Array.isArray(prepared)) {
      return finish("CLIENT_ERROR", prepared.unsendable);
    }
    if (prepared) messages.splice(0, messages.length, ...prepared);
    if (signal.aborted) return finish("CANCELLED", "Cancelled before the model call");
    rounds++;
    const round = rounds;
    emit({ type: "round_start", round });

    const reply = await callModel(options, { messages, round, signal, answered, budget });
    phaseMark("reply_end", { round });
    if (reply.usage) usage = addUsage(usage, reply.usage);
    if (reply.kind === "message" && reply.answeredBy.cost !== undefined) {
      cost = (cost ?? 0) + reply.answeredBy.cost;
    }
    if (reply.kind === "message" && reply.answeredBy.saved !== undefined) {
      saved = (saved ?? 0) + reply.answeredBy.saved;
    }
    if (reply.kind === "error" && reply.contextOverflow && !compactedForOverflow) {
      // The server counted more tokens than tern's estimate: compact now, once, and ask again.
      compactedForOverflow = true;
      const compacted = await options.prepare?.(messages, signal, { force: true });
      if (compacted !== undefined && !Array.isArray(compacted)) {
        return finish("CLIENT_ERROR", compacted.unsendable);
      }
      if (compacted) {
        messages.splice(0, messages.length, ...compacted);
        rounds--;
        continue;
      }
      // Cancelled while it compacted (which then wrote nothing): the turn was cancelled.
      if (signal.aborted) return finish("CANCELLED", "Cancelled while compacting");
    }
    if (reply.kind !== "message") {
      return finish(reply.kind === "aborted" ? "CANCELLED" : "CLIENT_ERROR", reply.error);
    }
    // An answer over the budget is not kept: the conversation and session stay as they were.
    const over = budget.take(reply.message);
    if (over !== undefined) return finish("CLIENT_ERROR", over);

    const { message, finishReason, answeredBy } = reply;
    const said = (shown: AssistantMessage): AgentEvent => {
      const event: AgentEvent = { type: "assistant_message", round, message: shown };
      if (reply.usage) event.usage = reply.usage;
      if (answeredBy.cost !== undefined) event.cost = answeredBy.cost;
      return event;
    };
    if (message.content !== "") text = message.content;
    const calls = message.toolCalls ?? [];
    if (finishReason === "length") {
      // Arguments cut off by the limit cannot be trusted: keep the text, drop the calls.
      const kept: AssistantMessage = { role: "assistant", content: message.content };
      if (message.thinking) kept.thinking = message.thinking;
      add(kept, reply.usage, answeredBy);
      emit(said(message));
      const why = contextWindowFilled(reply.stopReason)
        ? "The model's context window filled up before it finished its answer"
        : "The model hit its output token limit";
      return finish("LENGTH_LIMIT", why);
    }
    if (finishReason === "refusal") {
      // Text the filter cut off is kept and shown; tool calls in that reply are not run.
      if (message.content !== "") {
        const kept: AssistantMessage = { role: "assistant", content: message.content };
        add(kept, reply.usage, answeredBy);
        emit(said(kept));
      }
      return { ...finish("CLIENT_ERROR", refusalMessage(reply.stopReason)), refused: true };
    }
    if (finishReason === "pause" && calls.length === 0) {
      // The server paused a long turn (Anthropic's `pause_turn`): the conversation sent back
      // as it is lets the model go on, within the round limit.
      if (message.content !== "") {
        add(message, reply.usage, answeredBy);
        emit(said(message));
      }
      continue;
    }
    if (message.content === "" && calls.length === 0) {
      return finish("EMPTY_RESPONSE", "The model returned neither text nor tool calls");
    }
    add(message, reply.usage, answeredBy);
    emit(said(message));
    if (calls.length === 0) {
      const more = await options.beforeStop?.(signal);
      if (more === undefined || signal.aborted) return finish("COMPLETED");
      add({ role: "user", content: more });
      emit({ type: "steering", round, text: more });
      continue;
    }

    let stopped: string | undefined;
    const ran = await runToolCalls(calls, {
      tools,
      emit,
      signal,
      round,
      options,
      stop: { turn: (reason) => stopped ??= reason, reason: () => stopped },
    });
    const fitted = await options.fitResults?.(
      ran.map(({ call, observation }) => ({ callId: call.id, observation })),
    );
    const results = fitted === undefined
      ? ran
      : ran.map((result, i) => ({ ...result, observation: fitted[i] }));
    for (const { call, observation } of results) {
      add(toolMessage(call, observation));
      toolCalls++;
      failures.record(call, observation);
    }
    if (signal.aborted) return finish("CANCELLED", "Cancelled while tools were running");
    // A hook's `continue: false`: the person was told why (by the gate), the model is not asked.
    if (stopped !== undefined) return finish("COMPLETED");
    for (const steer of options.steering?.() ?? []) {
      add({ role: "user", content: steer });
      emit({ type: "steering", round, text: steer });
    }
    if (failures.count >= REPEATED_FAILURE_LIMIT) {
      return finish(
        "REPEATED_FAILURE",
        `The same "${failures.name}" call failed ${failures.count} times in a row`,
      );
    }
  }
  return finish("MAX_ROUNDS", `Stopped after ${maxRounds} rounds`);
}

type ModelReply =
  | {
    kind: "message";
    message: AssistantMessage;
    finishReason: FinishReason;
    /** The server's own word for the reason, when it is not a usual one. */
    stopReason?: string;
    usage?: Usage;
    answeredBy: AnsweredBy;
  }
  | { kind: "error" | "aborted"; error: string; usage?: Usage; contextOverflow?: boolean };

interface ModelCall {
  messages: Message[];
  round: number;
  signal: AbortSignal;
  answered: () => void;
  budget: OutputBudget;
}

async function callModel(options: RunTurnOptions, call: ModelCall): Promise<ModelReply> {
  const { messages, round, signal, answered, budget } = call;
  const request: ModelRequest = {
    model: options.model,
    messages,
    tools: options.tools.specs(),
    maxTokens: options.maxTokens,
    temperature: options.temperature,
  };
  if (options.thinking !== undefined) request.thinking = options.thinking;
  if (options.cacheKey !== undefined) request.cacheKey = options.cacheKey;
  const emit = options.emit;
  for await (const event of options.provider.stream(request, signal)) {
    switch (event.type) {
      case "text_delta":
      case "thinking_delta": {
        answered();
        // Leaving the loop ends the provider's stream, which stops reading the body.
        const over = budget.streamed(event.text.length);
        if (over !== undefined) return { kind: "error", error: over };
        emit({ type: event.type, round, text: event.text });
        break;
      }
      case "tool_call_delta":
        answered();
        if (event.name) options.onToolCallStart?.(event.name);
        break;
      case "retry":
        budget.restart();
        emit({ ...event, round });
        break;
      case "fallback":
        budget.restart();
        emit({ ...event, type: "model_switch", round });
        break;
      case "done": {
        answered();
        const answeredBy: AnsweredBy = {};
        if (event.provider !== undefined) answeredBy.provider = event.provider;
        if (event.model !== undefined) answeredBy.model = event.model;
        if (event.cost !== undefined) answeredBy.cost = event.cost;
        if (event.saved !== undefined) answeredBy.saved = event.saved;
        return {
          kind: "message",
          message: event.message,
          finishReason: event.finishReason,
          stopReason: event.stopReason,
          usage: event.usage,
          answeredBy,
        };
      }
      case "error":
        if (event.kind === "aborted") return { kind: "aborted", error: event.message };
        return { kind: "error", error: event.message, contextOverflow: event.contextOverflow };
    }
  }
  if (signal.aborted) return { kind: "aborted", error: "Cancelled during the model call" };
  return { kind: "error", error: `Provider "${options.provider.name}" ended without a result` };
}

/** Why a turn ended when a content filter or the model's refusal stopped the answer. */
function refusalMessage(stopReason: string | undefined): string {
  return `The model API stopped the answer as ${JSON.stringify(stopReason ?? "refusal")} ` +
    "(a content filter or the model's refusal): rephrase the request";
}

interface CallContext {
  tools: ToolRegistry;
  emit: EmitFn;
  signal: AbortSignal;
  round: number;
  options: RunTurnOptions;
  /** A call ends the turn (`turn`), and why it did, if one has (`reason`). */
  stop: { turn: (reason: string) => void; reason: () => string | undefined };
}

interface CallResult {
  call: ToolCall;
  observation: Observation;
}

/** Most read-only calls of one reply that run at once; the rest wait for a place. */
const MAX_CONCURRENT_CALLS = 10;

/**
 * Runs the calls of one model response: consecutive read-only calls run concurrently, at most
 * {@linkcode MAX_CONCURRENT_CALLS} at a time, every other call runs alone in order. Results
 * come back in the order of the calls, holding the bytes of the newest images only.
 */
async function runToolCalls(calls: ToolCall[], context: CallContext): Promise<CallResult[]> {
  const results: Array<CallResult | undefined> = Array(calls.length);
  const finished = (index: number, result: CallResult) => {
    results[index] = result;
    const { observation } = result;
    if (observation.status === "SUCCEEDED" && observation.images?.length) {
      dropOlderResultImages(results);
    }
  };
  let batch: number[] = [];
  const flush = async () => {
    const queue = batch;
    batch = [];
    let next = 0;
    const worker = async () => {
      while (next < queue.length) {
        const index = queue[next++];
        finished(index, await runToolCall(calls[index], context));
      }
    };
    const workers = Math.min(MAX_CONCURRENT_CALLS, queue.length);
    await Promise.all(Array.from({ length: workers }, worker));
  };
  for (const [index, call] of calls.entries()) {
    if (context.tools.get(call.name)?.readOnly) {
      batch.push(index);
      continue;
    }
    await flush();
    finished(index, await runToolCall(call, context));
  }
  await flush();
  return results as CallResult[];
}

async function runToolCall(call: ToolCall, context: CallContext): Promise<CallResult> {
  const { emit, round, signal } = context;
  const tool = context.tools.get(call.name);
  const parsed = parseArguments(call.arguments);
  emit({
    type: "tool_start",
    round,
    callId: call.id,
    name: call.name,
    args: parsed.ok ? parsed.value : call.arguments,
    readOnly: tool?.readOnly ?? false,
  });
  phaseMark("tool_start", { round, name: call.name });
  const started = performance.now();
  let observation: Observation;
  if (!tool) {
    const known = context.tools.names.map((n) => `"${n}"`).join(", ");
    observation = {
      status: "ERROR",
      code: "UNKNOWN_TOOL",
      // The name as written, made visible: cleaned for the terminal, one with an escape
      // sequence in it would read as the tool it is not.
      message: `There is no tool "${visibleText(call.name)}"; available tools: ${known}`,
    };
  } else if (context.stop.reason() !== undefined) {
    observation = {
      status: "ERROR",
      code: "POLICY_DENIED",
      message: `Not run: a hook stopped the turn (${context.stop.reason()})`,
    };
  } else if (!parsed.ok) {
    observation = {
      status: "ERROR",
      code: "INVALID_ARGUMENTS",
      message: parsed.tooDeep
        ? `Arguments for "${call.name}" nest more than ${MAX_ARGUMENT_DEPTH} levels deep; ` +
          "send a flatter JSON object"
        : `Arguments for "${call.name}" are not valid JSON (${parsed.error}); ` +
          "send one complete JSON object",
    };
  } else {
    const progress = progressUpdates((text) =>
      emit({ type: "tool_update", callId: call.id, text })
    );
    try {
      observation = await tool.run(parsed.value, {
        callId: call.id,
        workspace: context.options.workspace,
        signal,
        update: progress.update,
        stopTurn: context.stop.turn,
      });
    } finally {
      progress.flush();
    }
  }
  const durationMs = Math.round(performance.now() - started);
  phaseMark("tool_end", { round, name: call.name });
  emit({
    type: "tool_end",
    round,
    callId: call.id,
    name: call.name,
    observation: withoutImageBytes(observation),
    durationMs,
  });
  return { call, observation };
}

/**
 * The observation as events carry it: an image by its type and hash, without its bytes (JSON
 * output, rpc and the TUI need no megabytes of base64; the model gets them in the message).
 */
function withoutImageBytes(observation: Observation): Observation {
  if (observation.status !== "SUCCEEDED" || !observation.images?.length) return observation;
  return {
    ...observation,
    images: observation.images.map((image) => ({ ...image, data: "" })),
  };
}

/**
 * The arguments as a value, or why not: not JSON, or nested so deep that walking them (the
 * repeat detector, validation) would overflow the stack.
 */
function parseArguments(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string; tooDeep?: boolean } {
  // Models send "" for a call without parameters.
  if (text.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (nestsDeeperThan(value, MAX_ARGUMENT_DEPTH)) {
    return {
      ok: false,
      error: `nested more than ${MAX_ARGUMENT_DEPTH} levels deep`,
      tooDeep: true,
    };
  }
  return { ok: true, value };
}

function toolMessage(call: ToolCall, observation: Observation): ToolMessage {
  const message: ToolMessage = {
    role: "tool",
    toolCallId: call.id,
    name: call.name,
    content: observationText(observation),
  };
  if (observation.status === "SUCCEEDED" && observation.images?.length) {
    message.images = observation.images;
  }
  return message;
}

/** Counts how often the identical call (name and arguments) has failed in a row. */
class FailureStreak {
  #key = "";
  name = "";
  count = 0;

  record(call: ToolCall, observation: Observation): void {
    if (observation.status === "SUCCEEDED") {
      this.#key = "";
      this.count = 0;
      return;
    }
    const key = `${call.name}\u0000${canonicalArguments(call.arguments)}`;
    if (key === this.#key) {
      this.count++;
    } else {
      this.#key = key;
      this.name = call.name;
      this.count = 1;
    }
  }
}

/** Argument text with insignificant whitespace and key order removed, when it is JSON. */
function canonicalArguments(text: string): string {
  const parsed = parseArguments(text);
  return parsed.ok ? stableStringify(parsed.value) : text;
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
      .map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}
