/**
 * Reading the fields of a model server's stream events, which tern does not trust: each wire
 * stream reads ids, names, arguments, deltas and token counts through these, so a value of the
 * wrong type never reaches the session. (A tool call whose arguments were an object was saved
 * as it came and broke every later turn of the session.)
 */
import { fnv1aHex } from "../core/fnv.ts";
import type { ToolCall, Usage } from "../core/messages.ts";
import { terminalText } from "../core/terminal_text.ts";
import { clientError, clip } from "./errors.ts";
import type { FinishReason, StreamEvent } from "./types.ts";

/** A field of a stream event whose type is wrong and that has no reading as the right one. */
export class WireFieldError extends Error {
  override name = "WireFieldError";
}

/**
 * `value` when it is a string; undefined when it is absent (undefined or null).
 * @throws {WireFieldError} for any other value, naming the field (`what`) and the value.
 */
export function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  throw new WireFieldError(
    `Cannot read model API stream event: ${what} ${
      clip(terminalText(JSON.stringify(value) ?? String(value)), 80)
    } is not a string (the server does not follow its API)`,
  );
}

/** A streamed piece of text: `value` when it is a non-empty string, else undefined (dropped). */
export function deltaText(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * A tool call's arguments (or a piece of them) as JSON text: a string as it came, any other
 * JSON value written as JSON (some servers send the arguments object itself); undefined when
 * absent (undefined or null).
 */
export function argumentsText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * A call's arguments as the object they are meant to be; undefined when the text is not one
 * JSON object (invalid or cut-off JSON, an array, a number, empty text).
 */
export function argumentsObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A call's arguments as a request sends them back: the text as the model wrote it when it is
 * one JSON object, else `{}`. Servers check what comes back (Ollama answers every later request
 * of the conversation with 400 "invalid tool call arguments"), and the tool result already
 * tells the model its arguments were invalid. The session keeps what the model sent.
 */
export function argumentsToSend(text: string): string {
  return argumentsObject(text) === undefined ? "{}" : text;
}

/** True for a finish reason whose server word a `done` event carries as `stopReason`. */
export function namesStopReason(reason: FinishReason): boolean {
  return reason === "refusal" || reason === "pause" || reason === "other";
}

/** The most characters of a server's word for why it stopped that a `done` event keeps. */
const MAX_STOP_REASON_CHARS = 100;

/**
 * Server words for an answer cut off because the context window filled, not the output limit
 * (Anthropic's `model_context_window_exceeded`, Mistral's `model_length`).
 */
const CONTEXT_WINDOW_WORDS: ReadonlySet<string> = new Set([
  "model_context_window_exceeded",
  "model_length",
]);

/** True when a `length` stop's word says the context window filled, not the output limit. */
export function contextWindowFilled(word: string | undefined): boolean {
  return word !== undefined && CONTEXT_WINDOW_WORDS.has(word);
}

/**
 * The server's word for why it stopped (`content_filter`, `refusal`), as a `done` event carries
 * it for `reason` (see {@linkcode namesStopReason}), and for `length` when the context window
 * filled: messages quote it, so it comes without escapes or controls and clipped. Undefined
 * when `reason` names none or the server sent none.
 */
export function stopReasonOf(reason: FinishReason, word: string | undefined): string | undefined {
  if (word === undefined) return undefined;
  if (!namesStopReason(reason) && !(reason === "length" && contextWindowFilled(word))) {
    return undefined;
  }
  return clip(terminalText(word), MAX_STOP_REASON_CHARS);
}

/** A token count: `value` when it is a non-negative integer, else undefined. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * `usage` with each part within its whole: cached tokens no more than the input tokens (in the
 * OpenAI APIs the input count includes them), reasoning tokens no more than the output tokens.
 * A server's slip, or a hostile server, must not show or price more cached tokens than it was
 * sent (`10 tokens in (1,000,000,000 cached)`).
 */
export function usageWithinTotals(usage: Usage): Usage {
  return {
    ...usage,
    cachedTokens: Math.min(usage.cachedTokens, usage.inputTokens),
    reasoningTokens: Math.min(usage.reasoningTokens, usage.outputTokens),
  };
}

/**
 * The calls of one reply with ids that are unique and not empty: an empty id becomes
 * `call_<position>`, a repeated one gets `_2`, `_3`, …. Each tool result names its call by id,
 * and strict APIs reject a conversation where two results name the same call.
 */
export function uniqueCallIds(calls: ToolCall[]): ToolCall[] {
  const taken = new Set<string>();
  // The suffix to try next for each id: every one below it is taken, so thousands of calls
  // with one id take linear time, not square.
  const next = new Map<string, number>();
  return calls.map((call, position) => {
    const base = call.id === "" ? `call_${position}` : call.id;
    let id = base;
    let n = next.get(base) ?? 2;
    while (taken.has(id)) id = `${base}_${n++}`;
    next.set(base, n);
    taken.add(id);
    return id === call.id ? call : { ...call, id };
  });
}

/**
 * A tool call's id as an API that limits ids accepts it: `id` itself when it fits (only
 * `[A-Za-z0-9_-]` where `strict`, at most `maxLength` characters), else the fitting part of it
 * with every other character made `_`, then `_` and a hash of the whole id. The same id always
 * maps alike, so a call and its result still match; ids that differ stay apart. Ids come from
 * any provider a conversation used (Kimi's `functions.read:0`, long ids of other servers).
 */
export function fittingCallId(id: string, maxLength: number, strict: boolean): string {
  const safe = strict ? id.replace(/[^A-Za-z0-9_-]/g, "_") : id;
  if (safe === id && id.length <= maxLength && id !== "") return id;
  const suffix = `_${fnv1aHex(id)}`;
  return safe.slice(0, maxLength - suffix.length) + suffix;
}

/**
 * The events `read()` returns; a `WireFieldError` it throws becomes the final error event
 * instead (not retried: the same server sends the same shape again).
 */
export function eventsOrFieldError(read: () => StreamEvent[]): StreamEvent[] {
  try {
    return read();
  } catch (error) {
    if (error instanceof WireFieldError) return [clientError(error.message)];
    throw error;
  }
}

/** True for a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
