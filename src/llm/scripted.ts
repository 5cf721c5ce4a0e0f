/**
 * A scripted model: replies come from a list or a function instead of a network. The same
 * `Script` drives the in-process `ScriptedProvider` (loop tests, `tern demo`) and the scripted
 * HTTP server in tests/support, so both produce the same events for the same script.
 */
import type { AssistantMessage, Usage } from "../core/messages.ts";
import { sleep } from "../core/sleep.ts";
import {
  abortedError,
  clientError,
  httpErrorMessage,
  malformedEventMessage,
  retryableError,
  STREAM_ENDED_EARLY_MESSAGE,
  withOverflow,
} from "./errors.ts";
import type { FinishReason, ModelRequest, Provider, StreamEvent } from "./types.ts";

/** A tool call the script makes the model request. */
export interface ScriptedToolCall {
  /** Default: `call_<reply index>_<call index>`. */
  id?: string;
  name: string;
  /** Raw JSON text; may be invalid on purpose. */
  arguments: string;
}

/** A server fault the scripted server (and, for symmetry, ScriptedProvider) simulates. */
export type ScriptFault =
  | "http400_context"
  | "http500"
  | "http429"
  | "http401"
  | "drop_mid_stream"
  | "malformed_sse"
  | "empty"
  | "hang";

/** One model reply. */
export interface ScriptedReply {
  /** Assistant text, streamed in a few chunks. */
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: FinishReason;
  /** Default: estimated from the request and reply sizes (never zero). */
  usage?: Partial<Usage>;
  /** Makes the reply fail instead; see `ScriptFault`. */
  fault?: ScriptFault;
  /** With `http429` or `http500`: the `Retry-After` header value (default "0" for 429, none for 500). */
  retryAfter?: string;
  /** Reasoning text streamed before the answer, in the API's own way. */
  thinking?: string;
}

/** Replies in order, or a function choosing the reply for the `index`-th request (from 0). */
export type Script = ScriptedReply[] | ((request: ModelRequest, index: number) => ScriptedReply);

/** The provider's message for each HTTP fault, as the scripted server puts it in the body. */
export const SCRIPTED_HTTP_FAULTS = {
  http400_context: { status: 400, message: "prompt is too long: 210000 tokens > 200000 maximum" },
  http500: { status: 500, message: "The server had an error while processing your request" },
  http429: { status: 429, message: "Rate limit reached for requests" },
  http401: { status: 401, message: "Incorrect API key provided" },
} as const;

/** The non-JSON `data:` payload the `malformed_sse` fault sends after the first text chunk. */
export const MALFORMED_SSE_PAYLOAD = "{not json";

const FAULTS: readonly string[] = [
  "http400_context",
  "http500",
  "http429",
  "http401",
  "drop_mid_stream",
  "malformed_sse",
  "empty",
  "hang",
];

/** The reply for a request, or an error message when the script has none or throws. */
export function scriptedReplyFor(
  script: Script,
  request: ModelRequest,
  index: number,
): ScriptedReply | { error: string } {
  if (typeof script === "function") {
    try {
      return script(request, index);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return { error: `Scripted model failed on request ${index + 1}: ${detail}` };
    }
  }
  const reply = script[index];
  if (reply === undefined) {
    return {
      error: `Scripted model has no reply for request ${index + 1}: ` +
        `the script has ${script.length} ${script.length === 1 ? "reply" : "replies"}`,
    };
  }
  return reply;
}

/** The reply's tool calls with ids filled in. */
export function scriptedToolCalls(
  reply: ScriptedReply,
  index: number,
): { id: string; name: string; arguments: string }[] {
  return (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${index}_${i}`,
    name: call.name,
    arguments: call.arguments,
  }));
}

/** The `Retry-After` header a faulting reply sends: its own, else "0" for a 429. */
export function scriptedRetryAfter(reply: ScriptedReply): string | undefined {
  return reply.retryAfter ?? (reply.fault === "http429" ? "0" : undefined);
}

/** The reply's finish reason, defaulted. */
export function scriptedFinishReason(reply: ScriptedReply): FinishReason {
  return reply.finishReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop");
}

/** The reply's usage: given counts, else about four characters per token (at least 1). */
export function scriptedUsage(reply: ScriptedReply, request: ModelRequest): Usage {
  const input = request.messages.reduce(
    (sum, m) =>
      sum + m.content.length +
      (m.role === "assistant" ? JSON.stringify(m.toolCalls ?? []).length : 0),
    0,
  );
  const output = (reply.text ?? "").length +
    (reply.toolCalls ?? []).reduce((sum, c) => sum + c.name.length + c.arguments.length, 0);
  return {
    inputTokens: reply.usage?.inputTokens ?? Math.max(1, Math.ceil(input / 4)),
    outputTokens: reply.usage?.outputTokens ?? Math.max(1, Math.ceil(output / 4)),
    cachedTokens: reply.usage?.cachedTokens ?? 0,
    reasoningTokens: reply.usage?.reasoningTokens ?? 0,
  };
}

/** Splits `text` into exactly `parts` pieces (some may be empty), never inside a code point. */
export function splitText(text: string, parts: number): string[] {
  const chars = Array.from(text);
  const size = Math.ceil(chars.length / parts);
  return Array.from({ length: parts }, (_, i) => chars.slice(i * size, (i + 1) * size).join(""));
}

/** Checks parsed JSON (e.g. a script file) and returns it as replies; throws TypeError. */
export function parseScript(value: unknown): ScriptedReply[] {
  if (!Array.isArray(value)) throw new TypeError("Cannot use script: expected an array of replies");
  value.forEach((reply: unknown, i) => {
    const where = `Cannot use script reply ${i + 1}`;
    if (typeof reply !== "object" || reply === null) throw new TypeError(`${where}: not an object`);
    const r = reply as Record<string, unknown>;
    if (r.text !== undefined && typeof r.text !== "string") {
      throw new TypeError(`${where}: "text" is not a string`);
    }
    if (r.fault !== undefined && !FAULTS.includes(String(r.fault))) {
      throw new TypeError(`${where}: unknown fault ${JSON.stringify(r.fault)}`);
    }
    const calls = r.toolCalls ?? [];
    if (!Array.isArray(calls)) throw new TypeError(`${where}: "toolCalls" is not an array`);
    for (const call of calls) {
      if (typeof call?.name !== "string" || typeof call?.arguments !== "string") {
        throw new TypeError(`${where}: each tool call needs string "name" and "arguments"`);
      }
    }
  });
  return value as ScriptedReply[];
}

export interface ScriptedProviderOptions {
  /** The provider's `name`. Default `scripted`. */
  name?: string;
  /** Pause before each streamed event, in milliseconds (the demo uses it to look live). Default 0. */
  delayMs?: number;
}

/**
 * An in-process Provider that plays a Script. Yields the events the OpenAI provider would yield
 * for the same reply from the scripted server, including its faults (a `hang` waits for the
 * signal). Never throws; honours the signal with a final `aborted` error.
 */
export class ScriptedProvider implements Provider {
  readonly name: string;
  /** Every request received, copied at the time of the call. */
  readonly requests: ModelRequest[] = [];
  #script: Script;
  #delayMs: number;

  constructor(script: Script, options: ScriptedProviderOptions = {}) {
    this.#script = script;
    this.name = options.name ?? "scripted";
    this.#delayMs = options.delayMs ?? 0;
  }

  async *stream(request: ModelRequest, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    const index = this.requests.length;
    this.requests.push(structuredClone(request));
    const reply = scriptedReplyFor(this.#script, request, index);
    for (const event of replyEvents(reply, request, index)) {
      if (event === "hang") {
        await waitForAbort(signal);
      } else if (this.#delayMs > 0) {
        await sleep(this.#delayMs, signal);
      }
      if (signal?.aborted) {
        yield abortedError();
        return;
      }
      if (event !== "hang") yield event;
      if (event !== "hang" && (event.type === "done" || event.type === "error")) return;
    }
  }
}

function replyEvents(
  reply: ScriptedReply | { error: string },
  request: ModelRequest,
  index: number,
): (StreamEvent | "hang")[] {
  if ("error" in reply) return [clientError(reply.error)];
  switch (reply.fault) {
    case "http400_context":
    case "http500":
    case "http429":
    case "http401": {
      const { status, message } = SCRIPTED_HTTP_FAULTS[reply.fault];
      const text = httpErrorMessage(status, message);
      if (status === 401) return [clientError(text, status)];
      if (status === 400) return [withOverflow(clientError(text, status), message)];
      const header = scriptedRetryAfter(reply);
      return [
        retryableError(
          text,
          header === undefined ? { status } : { status, retryAfterMs: Number(header) * 1000 },
        ),
      ];
    }
    case "malformed_sse":
      return [
        ...textEvents(reply.text ?? "").slice(0, 1),
        clientError(malformedEventMessage(MALFORMED_SSE_PAYLOAD)),
      ];
    case "hang":
      return ["hang"];
    case "empty":
      return [{
        type: "done",
        message: { role: "assistant", content: "" },
        finishReason: "stop",
        usage: scriptedUsage({}, request),
      }];
    case "drop_mid_stream":
      return [...partialEvents(reply, index), retryableError(STREAM_ENDED_EARLY_MESSAGE)];
  }
  const calls = scriptedToolCalls(reply, index);
  const events: StreamEvent[] = [
    ...splitText(reply.thinking ?? "", 2).filter((chunk) => chunk !== "").map((
      text,
    ): StreamEvent => ({ type: "thinking_delta", text })),
    ...textEvents(reply.text ?? ""),
  ];
  for (let part = 0; part < 3; part++) {
    calls.forEach((call, i) => {
      events.push(
        part === 0
          ? { type: "tool_call_delta", index: i, id: call.id, name: call.name }
          : { type: "tool_call_delta", index: i },
      );
    });
  }
  const content = reply.text ?? "";
  const message: AssistantMessage = calls.length > 0
    ? { role: "assistant", content, toolCalls: calls }
    : { role: "assistant", content };
  if (reply.thinking) message.thinking = [{ api: "openai", text: reply.thinking }];
  events.push({
    type: "done",
    message,
    finishReason: scriptedFinishReason(reply),
    usage: scriptedUsage(reply, request),
  });
  return events;
}

/** What `drop_mid_stream` delivers before the drop: half the text, then a call's first piece. */
export function partialReply(reply: ScriptedReply): { text: string; firstCall?: ScriptedToolCall } {
  const chunks = splitText(reply.text ?? "", 4).filter((chunk) => chunk !== "");
  return {
    text: chunks.slice(0, Math.ceil(chunks.length / 2)).join(""),
    firstCall: reply.toolCalls?.[0],
  };
}

function partialEvents(reply: ScriptedReply, index: number): StreamEvent[] {
  const { text, firstCall } = partialReply(reply);
  const events = textEvents(text);
  if (firstCall !== undefined) {
    const id = firstCall.id ?? `call_${index}_0`;
    events.push({ type: "tool_call_delta", index: 0, id, name: firstCall.name });
  }
  return events;
}

function textEvents(text: string): StreamEvent[] {
  return splitText(text, 4)
    .filter((chunk) => chunk !== "")
    .map((chunk) => ({ type: "text_delta", text: chunk }));
}

function waitForAbort(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal === undefined) return; // a hang without a signal never ends, as a real one
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
