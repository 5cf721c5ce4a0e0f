/**
 * The OpenAI Responses API wire format: request bodies from tern's messages, and stream events
 * back into StreamEvents. No I/O here; `openai_responses.ts` does the HTTP.
 */
import type {
  AssistantMessage,
  ImagePart,
  Message,
  ThinkingPart,
  ToolCall,
  Usage,
} from "../core/messages.ts";
import {
  clientError,
  type ErrorEvent,
  isRetryableStreamError,
  malformedEventMessage,
  providerDetail,
  retryableError,
  withOverflow,
} from "./errors.ts";
import type { WireStream } from "./http_stream.ts";
import type { FinishReason, ModelRequest, StreamEvent } from "./types.ts";
import {
  argumentsText,
  argumentsToSend,
  deltaText,
  eventsOrFieldError,
  isRecord,
  optionalString,
  stopReasonOf,
  tokenCount,
  uniqueCallIds,
  usageWithinTotals,
} from "./wire_fields.ts";

/** One item of a Responses `input` list. */
export type ResponsesInputItem =
  | { type: "message"; role: "system"; content: string }
  | {
    type: "message";
    role: "user";
    content: (
      | { type: "input_text"; text: string }
      | { type: "input_image"; image_url: string; detail: "auto" }
    )[];
  }
  | { type: "message"; role: "assistant"; content: { type: "output_text"; text: string }[] }
  | {
    type: "reasoning";
    id: string;
    summary: { type: "summary_text"; text: string }[];
    encrypted_content: string;
  }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | {
    type: "function_call_output";
    call_id: string;
    /** Text, or text and images when the result shows images (read of an image file). */
    output:
      | string
      | (
        | { type: "input_text"; text: string }
        | { type: "input_image"; image_url: string; detail: "auto" }
      )[];
  };

/** The POST body of a streaming `/responses` call. */
export interface ResponsesRequestBody {
  model: string;
  instructions?: string;
  input: ResponsesInputItem[];
  tools?: {
    type: "function";
    name: string;
    description: string;
    parameters: unknown;
    strict: false;
  }[];
  stream: true;
  /** Always false: tern keeps the conversation itself, nothing is stored server-side. */
  store: false;
  max_output_tokens?: number;
  temperature?: number;
  reasoning?: { effort: string; summary: "auto" };
  include?: "reasoning.encrypted_content"[];
  /** The conversation's key, so every round of it reaches the same prompt cache. */
  prompt_cache_key?: string;
}

/**
 * Builds the request body. The first system message becomes `instructions`; `tools` is omitted
 * when there are none. With `reasoning`, summaries and encrypted reasoning are asked for and
 * no temperature is sent (reasoning models reject it). Earlier reasoning goes back only when it
 * came from this API with an id and encrypted content: with `store: false` the server cannot
 * look up a reasoning item by id alone.
 */
export function toResponsesRequestBody(request: ModelRequest): ResponsesRequestBody {
  const body: ResponsesRequestBody = {
    model: request.model,
    input: [],
    stream: true,
    store: false,
  };
  for (const message of request.messages) {
    if (message.role === "system" && body.instructions === undefined) {
      body.instructions = message.content;
    } else {
      body.input.push(...toInputItems(message));
    }
  }
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    }));
  }
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.reasoning !== undefined) {
    body.reasoning = { effort: request.reasoning.effort, summary: "auto" };
    body.include = ["reasoning.encrypted_content"];
  } else if (request.temperature !== undefined) {
    body.temperature = request.temperature;
  }
  if (request.cacheKey !== undefined) body.prompt_cache_key = request.cacheKey;
  return body;
}

function toInputItems(message: Message): ResponsesInputItem[] {
  switch (message.role) {
    case "system":
      return [{ type: "message", role: "system", content: message.content }];
    case "user":
      return [{
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: message.content },
          ...(message.images ?? []).map(inputImage),
        ],
      }];
    case "tool":
      return [{
        type: "function_call_output",
        call_id: message.toolCallId,
        output: message.images?.length
          ? [{ type: "input_text", text: message.content }, ...message.images.map(inputImage)]
          : message.content,
      }];
    case "assistant":
      return assistantItems(message);
  }
}

function inputImage(image: ImagePart) {
  return {
    type: "input_image" as const,
    image_url: `data:${image.mediaType};base64,${image.data}`,
    detail: "auto" as const,
  };
}

/**
 * An assistant message as input items (its reasoning, text and calls): how the next request
 * sends it back, and how a WebSocket chain recognises what the server already holds.
 */
export function assistantItems(message: AssistantMessage): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  let messageSent = message.content === "";
  const callsSent = new Set<ToolCall>();
  const sendMessage = () => {
    if (messageSent) return;
    messageSent = true;
    items.push({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: message.content }],
    });
  };
  const sendCall = (call: ToolCall) => {
    if (callsSent.has(call)) return;
    callsSent.add(call);
    items.push({
      type: "function_call",
      call_id: call.id,
      name: call.name,
      arguments: argumentsToSend(call.arguments),
    });
  };
  const calls = message.toolCalls ?? [];
  // Each reasoning item, then the item that followed it in the server's output (the API
  // rejects a reasoning item sent back without it), then what is left: the message, the calls.
  for (const part of message.thinking ?? []) {
    if (part.api !== "openai-responses" || !part.id || part.data === undefined) continue;
    items.push({
      type: "reasoning",
      id: part.id,
      summary: part.text === "" ? [] : [{ type: "summary_text", text: part.text }],
      encrypted_content: part.data,
    });
    const next = part.followedBy;
    if (next === "message") sendMessage();
    else if (isRecord(next)) {
      const call = calls.find((c) => c.id === next.callId);
      if (call !== undefined) sendCall(call);
    }
  }
  sendMessage();
  for (const call of calls) sendCall(call);
  return items;
}

/**
 * The events' fields as the API defines them. The server is not trusted to follow it: every
 * field is read through wire_fields.ts.
 */
interface WireItem {
  type?: unknown;
  id?: unknown;
  call_id?: unknown;
  name?: unknown;
  arguments?: unknown;
  encrypted_content?: unknown;
  summary?: unknown;
}

interface WireResponse {
  id?: unknown;
  status?: unknown;
  usage?: {
    input_tokens?: unknown;
    output_tokens?: unknown;
    input_tokens_details?: { cached_tokens?: unknown } | null;
    output_tokens_details?: { reasoning_tokens?: unknown } | null;
  } | null;
  incomplete_details?: { reason?: unknown } | null;
  error?: unknown;
}

interface WireEvent {
  type?: unknown;
  item?: unknown;
  item_id?: unknown;
  output_index?: unknown;
  summary_index?: unknown;
  delta?: unknown;
  response?: WireResponse | null;
  error?: unknown;
}

interface CallSlot {
  index: number;
  /** The call's `call_id`, else its item id until a `call_id` arrives. */
  id: string;
  /** True once `id` is the `call_id` (tool results must name that one). */
  hasCallId: boolean;
  name: string;
  arguments: string;
}

const PARAGRAPH = "\n\n";

/** Folds the `data:` payloads of one Responses stream into events and the final message. */
export class ResponsesStreamState implements WireStream {
  #text = "";
  #thinking: ThinkingPart[] = [];
  /** Streamed reasoning text of items whose `output_item.done` has not arrived, by item id. */
  #openThinking = new Map<string, string>();
  #calls: CallSlot[] = [];
  #callsByItem = new Map<string, CallSlot>();
  /** The reasoning item added last whose next item has not been added yet. */
  #reasoningWaiting: string | undefined;
  /** The item that came right after each reasoning item, by the reasoning item's id. */
  #followers = new Map<string, "message" | CallSlot>();
  #messageItems = 0;
  #finish: FinishReason | undefined;
  /** `incomplete_details.reason` of an incomplete response. */
  #stopReason: string | undefined;
  #usage: Usage | undefined;
  #ended = false;
  #responseId: string | undefined;
  #errorCode: string | undefined;
  #secrets: readonly string[];

  /** `secrets` are redacted from any error text the server sends inside the stream. */
  constructor(secrets: readonly string[] = []) {
    this.#secrets = secrets;
  }

  /** Events for one payload. An `error` event is last and final. */
  apply(data: string): StreamEvent[] {
    if (data.trim() === "[DONE]") return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return [clientError(malformedEventMessage(data))];
    }
    if (typeof parsed !== "object" || parsed === null) {
      return [clientError(malformedEventMessage(data))];
    }
    return eventsOrFieldError(() => this.#applyEvent(parsed as WireEvent));
  }

  #applyEvent(event: WireEvent): StreamEvent[] {
    const response = isRecord(event.response) ? event.response as WireResponse : undefined;
    if (typeof response?.id === "string") this.#responseId = response.id;
    const delta = deltaText(event.delta);
    switch (event.type) {
      case "response.output_item.added":
        return this.#itemAdded(event);
      case "response.function_call_arguments.delta": {
        const slot = this.#slotFor(event);
        if (slot === undefined || delta === undefined) return [];
        slot.arguments += delta;
        return [{ type: "tool_call_delta", index: slot.index }];
      }
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (delta === undefined) return [];
        this.#text += delta;
        return [{ type: "text_delta", text: delta }];
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        if (delta === undefined) return [];
        const key = typeof event.item_id === "string" ? event.item_id : "";
        this.#openThinking.set(key, (this.#openThinking.get(key) ?? "") + delta);
        return [{ type: "thinking_delta", text: delta }];
      }
      case "response.reasoning_summary_part.added": {
        // A reasoning summary's parts are paragraphs (the stored text joins them so too).
        if (typeof event.summary_index !== "number" || event.summary_index < 1) return [];
        const key = typeof event.item_id === "string" ? event.item_id : "";
        this.#openThinking.set(key, (this.#openThinking.get(key) ?? "") + PARAGRAPH);
        return [{ type: "thinking_delta", text: PARAGRAPH }];
      }
      case "response.output_item.done":
        return this.#itemDone(event);
      case "response.completed":
        this.#end(response);
        this.#finish = this.#calls.length > 0 ? "tool_calls" : "stop";
        return [];
      case "response.incomplete": {
        this.#end(response);
        const reason = response?.incomplete_details?.reason;
        this.#stopReason = typeof reason === "string" ? reason : "incomplete";
        this.#finish = reason === "max_output_tokens"
          ? "length"
          : reason === "content_filter"
          ? "refusal"
          : "other";
        return [];
      }
      case "response.failed":
        this.#ended = true;
        return [this.#streamError(response?.error)];
      case "error":
        this.#ended = true;
        return [this.#streamError(event.error ?? event)];
      default:
        return [];
    }
  }

  /** True once `response.completed`, `response.incomplete` or `response.failed` arrived. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The response's id, once an event named it (`response.created` does). */
  get responseId(): string | undefined {
    return this.#responseId;
  }

  /** The code of the error that ended the stream (`previous_response_not_found`), if any. */
  get errorCode(): string | undefined {
    return this.#errorCode;
  }

  /** True once `response.completed` or `response.incomplete` arrived. */
  get complete(): boolean {
    return this.#finish !== undefined;
  }

  /**
   * The final event once reading stopped: `done` with the message, or a retryable error when
   * the stream ended before the response completed.
   */
  finish(): StreamEvent {
    if (this.#finish === undefined) {
      return retryableError("Model API stream ended early: no finish reason");
    }
    const toolCalls = uniqueCallIds(this.#calls.map(({ id, name, arguments: args }) => ({
      id,
      name,
      arguments: args,
    })));
    const message: AssistantMessage = toolCalls.length > 0
      ? { role: "assistant", content: this.#text, toolCalls }
      : { role: "assistant", content: this.#text };
    // Reasoning whose item never finished is kept as text; it cannot be sent back.
    const unfinished = [...this.#openThinking.values()].filter((text) => text !== "").map((
      text,
    ): ThinkingPart => ({ api: "openai-responses", text }));
    for (const part of this.#thinking) {
      const next = part.id === undefined ? undefined : this.#followers.get(part.id);
      if (next === "message") part.followedBy = "message";
      else if (next !== undefined) part.followedBy = { callId: toolCalls[next.index].id };
    }
    const thinking = [...this.#thinking, ...unfinished];
    if (thinking.length > 0) message.thinking = thinking;
    const finishReason = this.#finish;
    const done: StreamEvent = { type: "done", message, finishReason };
    const stopReason = stopReasonOf(finishReason, this.#stopReason);
    if (stopReason !== undefined) done.stopReason = stopReason;
    if (this.#usage !== undefined) done.usage = this.#usage;
    return done;
  }

  #itemAdded(event: WireEvent): StreamEvent[] {
    const item = isRecord(event.item) ? event.item as WireItem : undefined;
    const waiting = this.#reasoningWaiting;
    this.#reasoningWaiting = undefined;
    if (item?.type === "reasoning") {
      this.#reasoningWaiting = optionalString(item.id, "reasoning item id");
      return [];
    }
    if (item?.type === "message") {
      if (waiting !== undefined) this.#followers.set(waiting, "message");
      // Several message items make one text: a paragraph break between them.
      if (this.#messageItems++ === 0 || this.#text === "") return [];
      this.#text += PARAGRAPH;
      return [{ type: "text_delta", text: PARAGRAPH }];
    }
    if (item?.type !== "function_call") return [];
    const slot = this.#openCall(item, event.output_index);
    if (waiting !== undefined) this.#followers.set(waiting, slot);
    const delta: StreamEvent = { type: "tool_call_delta", index: slot.index };
    if (slot.id !== "") delta.id = slot.id;
    if (slot.name !== "") delta.name = slot.name;
    const args = argumentsText(item.arguments);
    if (args) slot.arguments = args;
    return [delta];
  }

  #itemDone(event: WireEvent): StreamEvent[] {
    const item = isRecord(event.item) ? event.item as WireItem : undefined;
    if (item?.type === "reasoning") {
      const id = optionalString(item.id, "reasoning item id");
      const streamed = this.#openThinking.get(id ?? "") ?? "";
      this.#openThinking.delete(id ?? "");
      const summary = (Array.isArray(item.summary) ? item.summary : [])
        .map((part) => isRecord(part) && typeof part.text === "string" ? part.text : "")
        .join("\n\n");
      const part: ThinkingPart = { api: "openai-responses", text: summary || streamed };
      if (id) part.id = id;
      if (typeof item.encrypted_content === "string") part.data = item.encrypted_content;
      this.#thinking.push(part);
      return [];
    }
    if (item?.type !== "function_call") return [];
    const known = this.#slotFor({ item_id: item.id, output_index: event.output_index });
    const slot = known ?? this.#openCall(item, event.output_index);
    const callId = optionalString(item.call_id, "tool call id");
    const name = optionalString(item.name, "tool call name");
    if (!slot.hasCallId && callId) {
      slot.id = callId;
      slot.hasCallId = true;
    }
    if (slot.name === "" && name) slot.name = name;
    const args = argumentsText(item.arguments);
    if (args !== undefined) slot.arguments = args;
    if (known !== undefined) return [];
    return [{ type: "tool_call_delta", index: slot.index, id: slot.id, name: slot.name }];
  }

  /** @throws {WireFieldError} when the item's ids or name are there but not strings. */
  #openCall(item: WireItem, outputIndex: unknown): CallSlot {
    const itemId = optionalString(item.id, "output item id");
    const callId = optionalString(item.call_id, "tool call id");
    const slot: CallSlot = {
      index: this.#calls.length,
      id: callId || itemId || "",
      hasCallId: Boolean(callId),
      name: optionalString(item.name, "tool call name") ?? "",
      arguments: "",
    };
    this.#calls.push(slot);
    if (itemId) this.#callsByItem.set(itemId, slot);
    if (typeof outputIndex === "number") this.#callsByItem.set(`#${outputIndex}`, slot);
    return slot;
  }

  /** The call an event refers to: by item id, else by output index. */
  #slotFor(event: { item_id?: unknown; output_index?: unknown }): CallSlot | undefined {
    return (typeof event.item_id === "string" ? this.#callsByItem.get(event.item_id) : undefined) ??
      (typeof event.output_index === "number"
        ? this.#callsByItem.get(`#${event.output_index}`)
        : undefined);
  }

  #end(response: WireResponse | undefined): void {
    this.#ended = true;
    const usage = response?.usage;
    if (!isRecord(usage)) return;
    // `input_tokens` includes the cached ones, `output_tokens` the reasoning ones.
    this.#usage = usageWithinTotals({
      inputTokens: tokenCount(usage.input_tokens) ?? 0,
      outputTokens: tokenCount(usage.output_tokens) ?? 0,
      cachedTokens: tokenCount(usage.input_tokens_details?.cached_tokens) ?? 0,
      reasoningTokens: tokenCount(usage.output_tokens_details?.reasoning_tokens) ?? 0,
    });
  }

  #streamError(error: unknown): ErrorEvent {
    const fields = isRecord(error) ? error : {};
    const code = typeof fields.code === "string" ? fields.code : undefined;
    if (code !== undefined) this.#errorCode = code;
    const text = typeof fields.message === "string" ? fields.message : "";
    const detail = providerDetail(text, this.#secrets) ||
      providerDetail(code ?? "", this.#secrets) || "response failed";
    const message = `Model API stream error: ${detail}`;
    if (isRetryableStreamError(fields)) return retryableError(message);
    return withOverflow(clientError(message), `${text} ${code}`);
  }
}
