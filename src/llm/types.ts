/** The provider boundary: every wire API becomes this one stream of events. */
import type { AssistantMessage, Message, Usage } from "../core/messages.ts";
import type { ToolSpec } from "../core/tool_spec.ts";

export type { JsonSchema, ToolSpec } from "../core/tool_spec.ts";

/** How hard the model should think, as a person chooses it (`--thinking`, `/thinking`). */
export type ThinkingLevel = "off" | "low" | "medium" | "high";

/** The thinking levels in order, for validation and help text. */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "low", "medium", "high"];

/**
 * The concrete reasoning parameters for one request, resolved from a ThinkingLevel for one
 * model by `reasoningFor()` (model_info.ts). APIs with an effort setting (OpenAI) read
 * `effort`; APIs with a token budget (Anthropic) read `budgetTokens`.
 */
export interface ReasoningRequest {
  effort: "minimal" | "low" | "medium" | "high";
  budgetTokens: number;
}

export interface ModelRequest {
  model: string;
  messages: Message[];
  tools: ToolSpec[];
  /** Upper bound on output tokens; omitted means the provider's default. */
  maxTokens?: number;
  temperature?: number;
  /**
   * The level the person chose. The model router turns it into `reasoning` for each model it
   * tries; wire providers read only `reasoning`.
   */
  thinking?: ThinkingLevel;
  /** Reasoning parameters to send; absent means send none (the model does not think). */
  reasoning?: ReasoningRequest;
  /**
   * A stable key for the conversation (tern uses the session), so a provider that routes prompt
   * caches by key (OpenAI's `prompt_cache_key`) sends every round to the same cache.
   */
  cacheKey?: string;
}

/**
 * Why the model stopped: normalised across APIs. `refusal`: a content filter or the model's
 * own refusal stopped the answer (Chat `content_filter`, Anthropic `refusal`), so what came is
 * not an answer. `pause`: the server paused a long turn and continues it when the conversation
 * is sent back as it is (Anthropic `pause_turn`). `other`: a reason tern does not know.
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "refusal" | "pause" | "other";

/**
 * One event of a model stream. A stream ends with exactly one `done` or `error` event.
 * Tool-call arguments in `done.message.toolCalls` are complete but unparsed JSON text.
 */
export type StreamEvent =
  | { type: "text_delta"; text: string }
  /** Readable reasoning as it streams; never part of `done.message.content`. */
  | { type: "thinking_delta"; text: string }
  | { type: "tool_call_delta"; index: number; id?: string; name?: string }
  /**
   * The router is trying again after a failure: text and thinking streamed since the last
   * `retry` (or the start) are void, and the attempt starts over after `delayMs`.
   */
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  /** The router gave up on one provider/model and moved to the next of the fallback chain. */
  | { type: "fallback"; from: string; to: string; provider: string; model: string; reason: string }
  | {
    type: "done";
    message: AssistantMessage;
    finishReason: FinishReason;
    /**
     * The server's own word for why it stopped (`content_filter`, `refusal`, `pause_turn`),
     * given when `finishReason` is `refusal`, `pause` or `other`, and for `length` when the
     * context window filled (`model_context_window_exceeded`, `model_length`), so messages can
     * name it.
     */
    stopReason?: string;
    usage?: Usage;
    /** Set by the router: who answered, and what it cost in USD when prices are known. */
    provider?: string;
    model?: string;
    cost?: number;
    /**
     * USD the prompt cache saved on this call against the full input price (negative when a
     * cache write cost more than it saved yet); absent when prices are unknown.
     */
    saved?: number;
  }
  | ErrorStreamEvent;

/** The final event of a failed stream. */
export interface ErrorStreamEvent {
  type: "error";
  /** `aborted` when the caller's signal fired, otherwise a client-side failure. */
  kind: "client" | "aborted";
  message: string;
  status?: number;
  /**
   * True when trying the same request again may succeed: 408, 409, 429, 5xx, a dropped or
   * refused connection, a timeout, a stream cut short. Whether it is safe is the router's call.
   */
  retryable?: boolean;
  /** The server's `Retry-After` (or `retry-after-ms`), in milliseconds. */
  retryAfterMs?: number;
  /**
   * True when the server refused the request as longer than the model's context window: the
   * same request fails again, a compacted one may pass.
   */
  contextOverflow?: boolean;
  /**
   * True when a long timeout ended the attempt: the request timeout, or a stream with no
   * content for five idle timeouts. A second attempt would likely wait as long again, so the
   * router does not retry it on the same target; it moves to the next of the fallback chain.
   */
  longTimeout?: boolean;
}

/**
 * A model API. `stream()` never throws and never rejects: every failure, including an
 * aborted signal, is reported as a final `error` event.
 */
export interface Provider {
  readonly name: string;
  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent>;
  /**
   * Releases what the provider keeps open between requests (the Responses API's WebSockets);
   * later requests still work, without it. Never rejects.
   */
  close?(): Promise<void>;
}
