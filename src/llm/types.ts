/** The provider boundary: every wire API becomes this one stream of events. */
import type { AssistantMessage, Message, Usage } from "../core/messages.ts";
import type { ToolSpec } from "../core/tool_spec.ts";

export type { JsonSchema, ToolSpec } from "../core/tool_spec.ts";

export interface ModelRequest {
  model: string;
  messages: Message[];
  tools: ToolSpec[];
  /** Upper bound on output tokens; omitted means the provider's default. */
  maxTokens?: number;
  temperature?: number;
}

/** Why the model stopped: normalised across APIs. */
export type FinishReason = "stop" | "tool_calls" | "length" | "other";

/**
 * One event of a model stream. A stream ends with exactly one `done` or `error` event.
 * Tool-call arguments in `done.message.toolCalls` are complete but unparsed JSON text.
 */
export type StreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "tool_call_delta"; index: number; id?: string; name?: string }
  | { type: "done"; message: AssistantMessage; finishReason: FinishReason; usage?: Usage }
  | {
    type: "error";
    /** `aborted` when the caller's signal fired, otherwise a client-side failure. */
    kind: "client" | "aborted";
    message: string;
    status?: number;
  };

/**
 * A model API. `stream()` never throws and never rejects: every failure, including an
 * aborted signal, is reported as a final `error` event.
 */
export interface Provider {
  readonly name: string;
  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent>;
}
