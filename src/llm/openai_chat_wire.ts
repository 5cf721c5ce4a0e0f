/**
 * The OpenAI Chat Completions wire format: request bodies from tern's messages, and stream
 * chunks back into StreamEvents. No I/O here; `openai_chat.ts` does the HTTP.
 */
import type {
  AssistantMessage,
  ImagePart,
  Message,
  ThinkingPart,
  Usage,
} from "../core/messages.ts";
import {
  clientError,
  malformedEventMessage,
  NO_ANSWER_MESSAGE,
  retryableError,
  streamErrorEvent,
} from "./errors.ts";
import type { WireStream } from "./http_stream.ts";
import {
  type ReasoningDetail,
  ReasoningDetails,
  reasoningToSendBack,
} from "./openai_chat_reasoning.ts";
import { ToolCallAccumulator, type ToolCallFragment } from "./tool_call_accumulator.ts";
import type { FinishReason, ModelRequest, StreamEvent } from "./types.ts";
import {
  argumentsToSend,
  deltaText,
  eventsOrFieldError,
  fittingCallId,
  isRecord,
  stopReasonOf,
  tokenCount,
  usageWithinTotals,
} from "./wire_fields.ts";

/** A message as Chat Completions expects it. */
/** A part of a user message with images. */
export type ChatContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatContentPart[] }
  | {
    role: "assistant";
    content: string | null;
    tool_calls?: ChatToolCall[];
    reasoning_content?: string;
    reasoning_details?: ReasoningDetail[];
  }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  extra_content?: Record<string, unknown>;
}

/** The POST body of a streaming chat completion. */
export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  stream: true;
  stream_options: { include_usage: true };
  tools?: {
    type: "function";
    function: { name: string; description: string; parameters: unknown };
  }[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  reasoning_effort?: string;
  reasoning?: { effort: string };
  prompt_cache_key?: string;
}

/** Server dialects of Chat Completions that differ in how they take limits and reasoning. */
export interface ChatDialect {
  /** `max_completion_tokens` for OpenAI's own API (its reasoning models reject `max_tokens`). */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /** `reasoning` (`{effort}`, OpenRouter) or `reasoning_effort` (OpenAI and most servers). */
  reasoningField?: "reasoning_effort" | "reasoning";
  /** True when the server takes `prompt_cache_key` (OpenAI's own API); others may reject it. */
  promptCacheKey?: boolean;
}

/**
 * Builds the request body; `tools` is omitted when there are none. Reasoning models take no
 * temperature, so it is left out when `reasoning` is set. Earlier thinking goes back with its
 * assistant message in the form the server that streamed it asks for (openai_chat_reasoning.ts);
 * a call's `extra_content` goes back with the call.
 */
export function toChatRequestBody(
  request: ModelRequest,
  dialect: ChatDialect = {},
): ChatRequestBody {
  const body: ChatRequestBody = {
    model: request.model,
    messages: toChatMessages(request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (request.maxTokens !== undefined) {
    body[dialect.maxTokensField ?? "max_tokens"] = request.maxTokens;
  }
  const effort = request.reasoning?.effort;
  if (effort !== undefined) {
    if (dialect.reasoningField === "reasoning") body.reasoning = { effort };
    else body.reasoning_effort = effort;
  } else if (request.temperature !== undefined) {
    body.temperature = request.temperature;
  }
  if (dialect.promptCacheKey && request.cacheKey !== undefined) {
    body.prompt_cache_key = request.cacheKey;
  }
  return body;
}

/**
 * The messages in Chat Completions' shape. A tool message there holds text only, so the images
 * a tool result shows (read of an image file) go in a user message right after the run of tool
 * messages they belong to (the tool messages must follow their assistant message directly),
 * each image introduced by the call it came from.
 */
function toChatMessages(messages: readonly Message[]): ChatMessage[] {
  const result: ChatMessage[] = [];
  let pending: ChatContentPart[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    result.push({ role: "user", content: pending });
    pending = [];
  };
  for (const message of messages) {
    if (message.role !== "tool") flush();
    result.push(toChatMessage(message));
    if (message.role === "tool" && message.images?.length) {
      pending.push(
        { type: "text", text: `Images from the ${message.name} call ${message.toolCallId}:` },
        ...message.images.map(imageUrlPart),
      );
    }
  }
  flush();
  return result;
}

/** OpenAI's Chat API takes tool call ids of at most 40 characters. */
const MAX_CHAT_CALL_ID = 40;

/** A call id another provider gave, as OpenAI's Chat API takes it (see `fittingCallId`). */
function chatCallId(id: string): string {
  return fittingCallId(id, MAX_CHAT_CALL_ID, false);
}

function imageUrlPart(image: ImagePart): ChatContentPart {
  return { type: "image_url", image_url: { url: `data:${image.mediaType};base64,${image.data}` } };
}

function toChatMessage(message: Message): ChatMessage {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user":
      if (message.images === undefined || message.images.length === 0) {
        return { role: "user", content: message.content };
      }
      return {
        role: "user",
        content: [
          { type: "text", text: message.content },
          ...message.images.map(imageUrlPart),
        ],
      };
    case "tool":
      return {
        role: "tool",
        tool_call_id: chatCallId(message.toolCallId),
        content: message.content,
      };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) {
        return {
          role: "assistant",
          content: message.content,
          ...reasoningToSendBack(message.thinking),
        };
      }
      return {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        tool_calls: calls.map((call) => {
          const wire: ChatToolCall = {
            id: chatCallId(call.id),
            type: "function",
            function: { name: call.name, arguments: argumentsToSend(call.arguments) },
          };
          if (call.extraContent !== undefined) wire.extra_content = call.extraContent;
          return wire;
        }),
        ...reasoningToSendBack(message.thinking),
      };
    }
  }
}

interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  /** Moonshot: the cached tokens here too, or only here. */
  cached_tokens?: number;
}

interface ChatChunk {
  choices?: {
    delta?: {
      /** Text, or (Mistral's Magistral) a list of `text` and `thinking` parts. */
      content?: string | unknown[] | null;
      /** Reasoning text: `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (OpenRouter, Ollama). */
      reasoning_content?: string | null;
      reasoning?: string | null;
      /** OpenRouter: reasoning blocks in pieces, to be sent back whole. */
      reasoning_details?: unknown;
      /** OpenAI: the model declined; this is its answer, with `content` null. */
      refusal?: string | null;
      /** `ToolCallFragment`s, as far as the server follows the API. */
      tool_calls?: unknown;
    } | null;
    finish_reason?: string | null;
    /** Moonshot: usage on the last chunk's choice, here only. */
    usage?: WireUsage | null;
  }[];
  usage?: WireUsage | null;
  /** Groq: usage on the last chunk, here only. */
  x_groq?: { usage?: WireUsage | null } | null;
  /** An error the server ran into while streaming (OpenAI, OpenRouter, vLLM, TGI). */
  error?: unknown;
  /** TGI: the kind of a text `error` (`validation`, `overloaded`, `generation`). */
  error_type?: unknown;
}

/** Maps a wire `finish_reason` to tern's (Mistral's `model_length`: the context window filled). */
export function toFinishReason(reason: string): FinishReason {
  if (reason === "stop") return "stop";
  if (reason === "tool_calls" || reason === "function_call") return "tool_calls";
  if (reason === "length" || reason === "model_length") return "length";
  if (reason === "content_filter") return "refusal";
  return "other";
}

/**
 * Finish reasons that say the server failed before the answer was whole: Mistral's and
 * OpenRouter's `error`, vLLM's `abort`, DeepSeek's `insufficient_system_resource`. What came is
 * no answer (its tool calls may be cut or missing), and asking again may get one.
 */
const FAILED_FINISH_REASONS: ReadonlySet<string> = new Set([
  "error",
  "abort",
  "insufficient_system_resource",
]);

/**
 * Maps wire usage to tern's; missing counts, and counts that are not token counts, are 0.
 * `prompt_tokens` includes the cached ones and `completion_tokens` the reasoning ones, so those
 * parts are kept within them (`usageWithinTotals()`).
 */
export function toUsage(usage: WireUsage): Usage {
  return usageWithinTotals({
    inputTokens: tokenCount(usage.prompt_tokens) ?? 0,
    outputTokens: tokenCount(usage.completion_tokens) ?? 0,
    cachedTokens: tokenCount(usage.prompt_tokens_details?.cached_tokens) ??
      tokenCount(usage.cached_tokens) ?? 0,
    reasoningTokens: tokenCount(usage.completion_tokens_details?.reasoning_tokens) ?? 0,
  });
}

/** Folds the `data:` payloads of one response into events and the final message. */
export class ChatStreamState implements WireStream {
  #text = "";
  #thinking = "";
  #thinkingField: ThinkingPart["field"];
  #details = new ReasoningDetails();
  #sawDone = false;
  /** True once a payload other than `[DONE]` arrived. */
  #answered = false;
  #calls = new ToolCallAccumulator();
  #finish: string | undefined;
  #usage: Usage | undefined;
  #secrets: readonly string[];
  /** True once any payload arrived. */
  received = false;

  /** `secrets` are redacted from any error text the server sends inside the stream. */
  constructor(secrets: readonly string[] = []) {
    this.#secrets = secrets;
  }

  /** Events for one payload; `[DONE]` ends the stream. An `error` event is last and final. */
  apply(data: string): StreamEvent[] {
    this.received = true;
    if (data.trim() === "[DONE]") {
      this.#sawDone = true;
      return [];
    }
    this.#answered = true;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return [clientError(malformedEventMessage(data))];
    }
    if (typeof chunk !== "object" || chunk === null) {
      return [clientError(malformedEventMessage(data))];
    }
    return eventsOrFieldError(() => this.#applyChunk(chunk as ChatChunk));
  }

  #applyChunk(chunk: ChatChunk): StreamEvent[] {
    const { choices } = chunk;
    const choice = Array.isArray(choices) ? choices[0] : undefined;
    // Usage where servers put it: the chunk (OpenAI), `x_groq` (Groq), the choice (Moonshot).
    const usage = [
      chunk.usage,
      isRecord(chunk.x_groq) ? chunk.x_groq.usage : undefined,
      isRecord(choice) ? choice.usage : undefined,
    ].find(isRecord);
    if (usage !== undefined) this.#usage = toUsage(usage as WireUsage);
    if (isStreamError(chunk.error)) {
      // After a finish reason the message is whole (OpenRouter sends an error chunk after
      // `length`): the stream ends as that reason, usage kept. After a failed one the error
      // says why.
      if (this.#finish !== undefined && !FAILED_FINISH_REASONS.has(this.#finish)) {
        this.#sawDone = true;
        return [];
      }
      // TGI names the kind of its text error beside it: `overloaded` is worth another try.
      const error = typeof chunk.error === "string" && typeof chunk.error_type === "string"
        ? { message: chunk.error, type: chunk.error_type }
        : chunk.error;
      return [streamErrorEvent(error, this.#secrets)];
    }
    const events: StreamEvent[] = [];
    if (!isRecord(choice)) return events;
    const delta = isRecord(choice.delta) ? choice.delta : undefined;
    // The field with text: a server may send both, one of them empty (vLLM renamed the field).
    const field = deltaText(delta?.reasoning_content) !== undefined
      ? "reasoning_content"
      : deltaText(delta?.reasoning) !== undefined
      ? "reasoning"
      : undefined;
    const reasoning = deltaText(field === undefined ? undefined : delta?.[field]);
    if (reasoning !== undefined) {
      this.#thinking += reasoning;
      this.#thinkingField ??= field;
      events.push({ type: "thinking_delta", text: reasoning });
    }
    this.#details.add(delta?.reasoning_details);
    const parts = Array.isArray(delta?.content) ? contentParts(delta.content) : undefined;
    if (parts?.thinking) {
      this.#thinking += parts.thinking;
      this.#thinkingField ??= "content";
      events.push({ type: "thinking_delta", text: parts.thinking });
    }
    for (const piece of [parts ? parts.text : delta?.content, delta?.refusal]) {
      const text = deltaText(piece);
      if (text !== undefined) {
        this.#text += text;
        events.push({ type: "text_delta", text });
      }
    }
    for (const fragment of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
      if (!isRecord(fragment)) continue;
      const index = this.#calls.add(fragment as ToolCallFragment);
      const event: StreamEvent = { type: "tool_call_delta", index };
      const name = isRecord(fragment.function) ? fragment.function.name : undefined;
      if (typeof fragment.id === "string" && fragment.id !== "") event.id = fragment.id;
      if (typeof name === "string" && name !== "") event.name = name;
      events.push(event);
    }
    // Ollama sent `""` with every chunk: no reason yet, or a cut-off answer would read whole.
    const reason = choice.finish_reason;
    if (typeof reason === "string" && reason !== "") this.#finish = reason;
    return events;
  }

  /** True once `[DONE]` arrived. */
  get ended(): boolean {
    return this.#sawDone;
  }

  /**
   * The final event once the body ended. Without `[DONE]` and without a finish reason the
   * response is incomplete and this is an error, as is `[DONE]` with nothing before it. With
   * `[DONE]` after chunks but no finish reason, the reason is inferred: tool calls, else stop.
   * A finish reason that says the server failed is a retryable error.
   */
  finish(): StreamEvent {
    if (!this.#sawDone && this.#finish === undefined) {
      return retryableError("Model API stream ended early: no finish reason");
    }
    if (this.#finish !== undefined && FAILED_FINISH_REASONS.has(this.#finish)) {
      return retryableError(
        `Model API stream ended with finish reason "${this.#finish}": the server failed ` +
          "before the answer was whole",
      );
    }
    if (!this.#answered) return retryableError(NO_ANSWER_MESSAGE);
    const toolCalls = this.#calls.toolCalls();
    const finishReason = this.#finish !== undefined
      ? toFinishReason(this.#finish)
      : toolCalls.length > 0
      ? "tool_calls"
      : "stop";
    const message: AssistantMessage = toolCalls.length > 0
      ? { role: "assistant", content: this.#text, toolCalls }
      : { role: "assistant", content: this.#text };
    const details = this.#details.blocks;
    if (this.#thinking !== "" || details.length > 0) {
      const part: ThinkingPart = { api: "openai", text: this.#thinking };
      if (this.#thinkingField !== undefined) part.field = this.#thinkingField;
      if (details.length > 0) part.details = details;
      message.thinking = [part];
    }
    const done: StreamEvent = { type: "done", message, finishReason };
    const stopReason = stopReasonOf(finishReason, this.#finish);
    if (stopReason !== undefined) done.stopReason = stopReason;
    if (this.#usage !== undefined) done.usage = this.#usage;
    return done;
  }

  /** True once a finish reason arrived: the message is complete even if the body breaks. */
  get complete(): boolean {
    return this.#finish !== undefined;
  }
}

/**
 * The text and the thinking of a content list (Mistral's Magistral): `{"type": "text", "text"}`
 * parts, and `{"type": "thinking", "thinking": [{"type": "text", "text"}]}` parts (or a string
 * `thinking`). Parts of other types are left out.
 */
function contentParts(parts: unknown[]): { text: string; thinking: string } {
  let text = "";
  let thinking = "";
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if (part.type === "text" && typeof part.text === "string") text += part.text;
    if (part.type !== "thinking") continue;
    const inner = Array.isArray(part.thinking) ? part.thinking : [part.thinking];
    for (const piece of inner) {
      if (typeof piece === "string") thinking += piece;
      else if (isRecord(piece) && typeof piece.text === "string") thinking += piece.text;
    }
  }
  return { text, thinking };
}

/**
 * True for a chunk's `error` that is one: a message, or an object with a message, type or code
 * (vLLM sends `{"type":"InternalServerError","code":500}` without a message).
 */
function isStreamError(error: unknown): boolean {
  if (typeof error === "string") return error !== "";
  if (!isRecord(error)) return false;
  return ["message", "type", "code"].some((key) => error[key] !== undefined && error[key] !== null);
}
