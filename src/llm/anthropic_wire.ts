/**
 * The Anthropic Messages wire format: request bodies from tern's messages, and stream events
 * back into StreamEvents. No I/O here; `anthropic.ts` does the HTTP.
 */
import type {
  AssistantMessage,
  ImagePart,
  Message,
  ThinkingPart,
  ToolCall,
  Usage,
} from "../core/messages.ts";
import { clientError, malformedEventMessage, providerDetail, retryableError } from "./errors.ts";
import type { WireStream } from "./http_stream.ts";
import type { FinishReason, ModelRequest, StreamEvent } from "./types.ts";
import {
  argumentsObject,
  deltaText,
  eventsOrFieldError,
  fittingCallId,
  isRecord,
  optionalString,
  stopReasonOf,
  tokenCount,
  uniqueCallIds,
} from "./wire_fields.ts";

/** Marks the end of a prefix Anthropic should cache. */
export interface CacheControl {
  type: "ephemeral";
}

/** A content block as Anthropic takes it in a request. */
export type AnthropicBlock =
  | { type: "text"; text: string; cache_control?: CacheControl }
  | { type: "image"; source: { type: "base64"; media_type: string; data: string } }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | {
    type: "tool_use";
    id: string;
    name: string;
    input: Record<string, unknown>;
    cache_control?: CacheControl;
  }
  | {
    type: "tool_result";
    tool_use_id: string;
    /** Text, or text and image blocks when the result shows images (read of an image file). */
    content: string | (AnthropicTextBlock | AnthropicImageBlock)[];
    cache_control?: CacheControl;
  };

type AnthropicTextBlock = { type: "text"; text: string };
type AnthropicImageBlock = {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
};

/** A message as Anthropic takes it: user and assistant strictly alternate. */
export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

/** A tool definition as Anthropic takes it. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: unknown;
  cache_control?: CacheControl;
}

/** The POST body of a streaming Messages request. */
export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  /** Omitted when the conversation has no system message. */
  system?: { type: "text"; text: string; cache_control?: CacheControl }[];
  messages: AnthropicMessage[];
  tools?: AnthropicTool[];
  stream: true;
  thinking?: { type: "enabled"; budget_tokens: number };
  temperature?: number;
}

/** `max_tokens` when the request names none (Anthropic requires one). */
export const DEFAULT_MAX_TOKENS = 8192;
/** The longest call id tern sends Anthropic (its own are about 30 characters). */
const MAX_CALL_ID = 64;
/** Anthropic's smallest thinking budget; a smaller one means no thinking. */
const MIN_THINKING_BUDGET = 1024;
const EPHEMERAL: CacheControl = { type: "ephemeral" };
/** Breakpoints left for the conversation after the system prompt's and the tools'. */
const CONVERSATION_BREAKPOINTS = 2;

/**
 * Builds the request body. Four cache breakpoints (Anthropic's limit), so the prefix a coding
 * agent resends every round is read from the prompt cache: the last system block, the last
 * tool, and two that move with the conversation (see `markConversationBreakpoints`). With a thinking
 * budget of at least 1,024 tokens, `max_tokens` is raised to leave 1,024 tokens for the answer
 * and `temperature` is left out (Anthropic requires the default with thinking).
 */
export function toAnthropicRequestBody(request: ModelRequest): AnthropicRequestBody {
  const body: AnthropicRequestBody = {
    model: request.model,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: markConversationBreakpoints(toAnthropicMessages(request.messages)),
    stream: true,
  };
  const system: NonNullable<AnthropicRequestBody["system"]> = request.messages.flatMap((m) =>
    m.role === "system" ? [{ type: "text" as const, text: m.content }] : []
  );
  if (system.length > 0) {
    system[system.length - 1] = { ...system[system.length - 1], cache_control: EPHEMERAL };
    body.system = system;
  }
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool, i): AnthropicTool => {
      const wire: AnthropicTool = {
        name: tool.name,
        description: tool.description,
        input_schema: tool.parameters,
      };
      if (i === request.tools.length - 1) wire.cache_control = EPHEMERAL;
      return wire;
    });
  }
  const budget = request.reasoning?.budgetTokens ?? 0;
  if (budget >= MIN_THINKING_BUDGET && thinkingFits(body.messages)) {
    body.thinking = { type: "enabled", budget_tokens: budget };
    body.max_tokens = Math.max(body.max_tokens, budget + MIN_THINKING_BUDGET);
  } else if (request.temperature !== undefined) {
    body.temperature = request.temperature;
  }
  return body;
}

/**
 * False when Anthropic would refuse thinking for these messages: with thinking on, the last
 * assistant message must start with a thinking block when it made tool calls. It does not when
 * its calls came from another provider (a fallback, a `/model` switch) or from a request
 * without thinking (`/thinking` raised mid-turn); that request goes without thinking, the next
 * turn has it again.
 */
function thinkingFits(messages: readonly AnthropicMessage[]): boolean {
  const last = messages.findLast((message) => message.role === "assistant");
  if (last === undefined || !last.content.some((block) => block.type === "tool_use")) return true;
  const first = last.content[0]?.type;
  return first === "thinking" || first === "redacted_thinking";
}

/**
 * Puts a cache breakpoint on the last block of the newest user message (this round writes the
 * cache up to there) and on the last block of the user message before it (the end of the
 * previous round's prefix, which the cache already holds). The second one keeps the hit when a
 * round adds more than the 20 blocks Anthropic looks back from a breakpoint (many tool
 * results). User messages end in text or tool results, which both take `cache_control`.
 */
function markConversationBreakpoints(messages: AnthropicMessage[]): AnthropicMessage[] {
  let marked = 0;
  for (let i = messages.length - 1; i >= 0 && marked < CONVERSATION_BREAKPOINTS; i--) {
    const message = messages[i];
    if (message.role !== "user") continue;
    const last = message.content.length - 1;
    const block = message.content[last];
    if (block === undefined || (block.type !== "text" && block.type !== "tool_result")) continue;
    message.content[last] = { ...block, cache_control: EPHEMERAL };
    marked++;
  }
  return messages;
}

/**
 * The non-system messages, with consecutive user-side messages (tool results, and user text
 * after them) merged into one user message, since Anthropic wants strict alternation.
 */
function toAnthropicMessages(messages: readonly Message[]): AnthropicMessage[] {
  const result: AnthropicMessage[] = [];
  const addUserBlock = (block: AnthropicBlock) => {
    const last = result.at(-1);
    if (last?.role === "user") last.content.push(block);
    else result.push({ role: "user", content: [block] });
  };
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break;
      case "user":
        // Images before their text, as Anthropic advises; the text stays last (a breakpoint).
        for (const image of message.images ?? []) addUserBlock(imageBlock(image));
        addUserBlock({ type: "text", text: message.content });
        break;
      case "tool":
        addUserBlock({
          type: "tool_result",
          tool_use_id: anthropicCallId(message.toolCallId),
          content: message.images?.length
            ? [{ type: "text", text: message.content }, ...message.images.map(imageBlock)]
            : message.content,
        });
        break;
      case "assistant": {
        const calls = message.toolCalls ?? [];
        if (message.content === "" && calls.length === 0) break;
        const content: AnthropicBlock[] = (message.thinking ?? []).flatMap(toThinkingBlock);
        // Anthropic rejects empty text blocks.
        if (message.content !== "") content.push({ type: "text", text: message.content });
        for (const call of calls) {
          const id = anthropicCallId(call.id);
          content.push({ type: "tool_use", id, name: call.name, input: toInput(call) });
        }
        result.push({ role: "assistant", content });
        break;
      }
    }
  }
  return result;
}

/**
 * A call id as Anthropic takes it (`^[a-zA-Z0-9_-]+$`): ids of other providers a conversation
 * used (Kimi's `functions.read:0`) are made to fit (see `fittingCallId`).
 */
function anthropicCallId(id: string): string {
  return fittingCallId(id, MAX_CALL_ID, true);
}

function imageBlock(image: ImagePart): AnthropicImageBlock {
  return {
    type: "image",
    source: { type: "base64", media_type: image.mediaType, data: image.data },
  };
}

/** Anthropic's own thinking back as it sent it; other APIs' reasoning and unsigned text never. */
function toThinkingBlock(part: ThinkingPart): AnthropicBlock[] {
  if (part.api !== "anthropic") return [];
  if (part.data !== undefined) return [{ type: "redacted_thinking", data: part.data }];
  // Anthropic rejects a thinking block without its signature (e.g. from a cut-off stream).
  if (part.signature === undefined) return [];
  return [{ type: "thinking", thinking: part.text, signature: part.signature }];
}

/**
 * The call's arguments as an object. Invalid JSON (or JSON that is not an object) is sent as
 * `{}`: Anthropic rejects anything else, and the tool result already tells the model its
 * arguments were invalid.
 */
function toInput(call: ToolCall): Record<string, unknown> {
  return argumentsObject(call.arguments) ?? {};
}

/** Maps an Anthropic `stop_reason` to tern's. */
export function toAnthropicFinishReason(reason: string): FinishReason {
  if (reason === "end_turn" || reason === "stop_sequence") return "stop";
  if (reason === "tool_use") return "tool_calls";
  // The answer was cut off either way: by the output limit, or by the context window.
  if (reason === "max_tokens" || reason === "model_context_window_exceeded") return "length";
  if (reason === "refusal") return "refusal";
  if (reason === "pause_turn") return "pause";
  return "other";
}

/** Token counts as kept between events: only counts `tokenCount()` accepted. */
type WireUsage = Partial<Record<typeof USAGE_KEYS[number], number>>;

/**
 * The events' fields as the API defines them. The server is not trusted to follow it: every
 * field is read through wire_fields.ts.
 */
interface WireBlock {
  type?: unknown;
  text?: unknown;
  thinking?: unknown;
  data?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
}

interface WireDelta {
  type?: unknown;
  text?: unknown;
  partial_json?: unknown;
  thinking?: unknown;
  signature?: unknown;
  stop_reason?: unknown;
}

interface WireEvent {
  type?: unknown;
  index?: unknown;
  message?: { usage?: unknown } | null;
  content_block?: unknown;
  delta?: unknown;
  usage?: unknown;
  error?: { type?: unknown; message?: unknown } | null;
}

/** What a content block (by its stream index) turned out to be. */
type OpenBlock =
  | { kind: "text" }
  | { kind: "tool"; call: number }
  | { kind: "thinking"; part: ThinkingPart };

const USAGE_KEYS = [
  "input_tokens",
  "cache_read_input_tokens",
  "cache_creation_input_tokens",
  "output_tokens",
] as const;

/** Stream error types worth another try. */
const RETRYABLE_ERRORS = new Set(["overloaded_error", "api_error"]);

/** Folds the `data:` payloads of one Messages response into events and the final message. */
export class AnthropicStreamState implements WireStream {
  #secrets: readonly string[];
  #blocks = new Map<number, OpenBlock>();
  #text = "";
  #calls: { id: string; name: string; json: string; input: unknown }[] = [];
  #thinking: ThinkingPart[] = [];
  #usage: WireUsage = {};
  #stopReason: string | undefined;
  #stopped = false;
  /** True when a block other than text started after the last text block. */
  #otherSinceText = false;

  /** `secrets` are redacted from any error text the server sends inside the stream. */
  constructor(secrets: readonly string[] = []) {
    this.#secrets = secrets;
  }

  /** Events for one payload; `message_stop` ends the stream. An `error` event is last and final. */
  apply(data: string): StreamEvent[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return [clientError(malformedEventMessage(data))];
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return [clientError(malformedEventMessage(data))];
    }
    return eventsOrFieldError(() => this.#applyEvent(parsed as WireEvent));
  }

  #applyEvent(event: WireEvent): StreamEvent[] {
    const index = typeof event.index === "number" ? event.index : -1;
    const delta: WireDelta = isRecord(event.delta) ? event.delta : {};
    switch (event.type) {
      case "message_start":
        this.#mergeUsage(isRecord(event.message) ? event.message.usage : undefined);
        return [];
      case "content_block_start":
        return this.#start(index, isRecord(event.content_block) ? event.content_block : {});
      case "content_block_delta":
        return this.#delta(index, delta);
      case "message_delta":
        if (typeof delta.stop_reason === "string") this.#stopReason = delta.stop_reason;
        this.#mergeUsage(event.usage);
        return [];
      case "message_stop":
        this.#stopped = true;
        return [];
      case "error":
        return [this.#streamError(event.error)];
      default:
        // ping, content_block_stop and event types added later carry nothing we need.
        return [];
    }
  }

  /** True once `message_stop` arrived. */
  get ended(): boolean {
    return this.#stopped;
  }

  /** True once a stop reason arrived: the message is complete even if the body breaks. */
  get complete(): boolean {
    return this.#stopReason !== undefined;
  }

  /** The final event: `done`, or a retryable error when no stop reason ever arrived. */
  finish(): StreamEvent {
    if (this.#stopReason === undefined) {
      return retryableError("Model API stream ended early: no finish reason");
    }
    const toolCalls: ToolCall[] = uniqueCallIds(this.#calls.map((call) => ({
      id: call.id,
      name: call.name,
      arguments: call.json !== "" ? call.json : JSON.stringify(call.input ?? {}),
    })));
    const message: AssistantMessage = toolCalls.length > 0
      ? { role: "assistant", content: this.#text, toolCalls }
      : { role: "assistant", content: this.#text };
    if (this.#thinking.length > 0) message.thinking = this.#thinking;
    const finishReason = toAnthropicFinishReason(this.#stopReason);
    const done: StreamEvent = { type: "done", message, finishReason };
    const stopReason = stopReasonOf(finishReason, this.#stopReason);
    if (stopReason !== undefined) done.stopReason = stopReason;
    const usage = this.#toUsage();
    if (usage !== undefined) done.usage = usage;
    return done;
  }

  #start(index: number, block: WireBlock): StreamEvent[] {
    const afterOther = this.#otherSinceText;
    this.#otherSinceText = block.type !== "text";
    switch (block.type) {
      case "text": {
        this.#blocks.set(index, { kind: "text" });
        // Text blocks next to each other are one text (citations split it mid-sentence); text
        // after a call or a server tool's block is a paragraph of its own.
        const events = afterOther && this.#text !== "" ? this.#addText("\n\n") : [];
        return [...events, ...this.#addText(block.text)];
      }
      case "tool_use": {
        const call = this.#calls.length;
        const id = optionalString(block.id, "tool call id") ?? "";
        const name = optionalString(block.name, "tool call name") ?? "";
        this.#calls.push({ id, name, json: "", input: block.input });
        this.#blocks.set(index, { kind: "tool", call });
        return [{ type: "tool_call_delta", index: call, id, name }];
      }
      case "thinking": {
        const part: ThinkingPart = { api: "anthropic", text: "" };
        this.#thinking.push(part);
        this.#blocks.set(index, { kind: "thinking", part });
        return this.#addThinking(part, block.thinking);
      }
      case "redacted_thinking": {
        const data = optionalString(block.data, "redacted thinking data") ?? "";
        this.#thinking.push({ api: "anthropic", text: "", data });
        return [];
      }
      default:
        return [];
    }
  }

  #delta(index: number, delta: WireDelta): StreamEvent[] {
    const block = this.#blocks.get(index);
    switch (delta.type) {
      case "text_delta":
        return block?.kind === "text" ? this.#addText(delta.text) : [];
      case "thinking_delta":
        return block?.kind === "thinking" ? this.#addThinking(block.part, delta.thinking) : [];
      case "signature_delta":
        if (block?.kind === "thinking" && typeof delta.signature === "string") {
          block.part.signature = (block.part.signature ?? "") + delta.signature;
        }
        return [];
      case "input_json_delta": {
        const json = deltaText(delta.partial_json);
        if (block?.kind !== "tool" || json === undefined) return [];
        this.#calls[block.call].json += json;
        return [{ type: "tool_call_delta", index: block.call }];
      }
      default:
        return [];
    }
  }

  #addText(piece: unknown): StreamEvent[] {
    const text = deltaText(piece);
    if (text === undefined) return [];
    this.#text += text;
    return [{ type: "text_delta", text }];
  }

  #addThinking(part: ThinkingPart, piece: unknown): StreamEvent[] {
    const text = deltaText(piece);
    if (text === undefined) return [];
    part.text += text;
    return [{ type: "thinking_delta", text }];
  }

  /** Newer servers repeat input counts in `message_delta`: the latest number of each wins. */
  #mergeUsage(usage: unknown): void {
    if (!isRecord(usage)) return;
    for (const key of USAGE_KEYS) {
      const value = tokenCount(usage[key]);
      if (value !== undefined) this.#usage[key] = value;
    }
  }

  #toUsage(): Usage | undefined {
    const u = this.#usage;
    if (USAGE_KEYS.every((key) => u[key] === undefined)) return undefined;
    // Unlike the OpenAI APIs' input count, `input_tokens` leaves out the tokens read from and
    // written to the cache (a cached prompt has far more of them than of the rest): the whole
    // is their sum, so the parts never exceed it and nothing is clamped.
    const cacheRead = u.cache_read_input_tokens ?? 0;
    const cacheWrite = u.cache_creation_input_tokens ?? 0;
    return {
      inputTokens: (u.input_tokens ?? 0) + cacheRead + cacheWrite,
      outputTokens: u.output_tokens ?? 0,
      cachedTokens: cacheRead,
      reasoningTokens: 0,
      cacheWriteTokens: cacheWrite,
    };
  }

  #streamError(error: unknown): StreamEvent {
    const fields = isRecord(error) ? error : {};
    const type = typeof fields.type === "string" ? fields.type : "";
    const detail = typeof fields.message === "string" && fields.message !== ""
      ? fields.message
      : type || "unknown error";
    const message = `Model API stream error: ${providerDetail(detail, this.#secrets)}`;
    return RETRYABLE_ERRORS.has(type) ? retryableError(message) : clientError(message);
  }
}
