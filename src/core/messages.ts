/** Conversation messages in tern's own provider-neutral shape. */

/** A tool call requested by the model; `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  /**
   * Chat Completions: the `extra_content` a server attached to the call (Gemini puts its
   * `google.thought_signature` there), sent back with the call as it came.
   */
  extraContent?: Record<string, unknown>;
}

export interface SystemMessage {
  role: "system";
  content: string;
}

export interface UserMessage {
  role: "user";
  content: string;
  /** Images that go with the text, in order (`tern run --image`). */
  images?: ImagePart[];
}

/** The image formats every supported API accepts. */
export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/**
 * One image in a message. In memory it carries its bytes; a session stores them once per
 * content hash in the session's folder and the entry only `sha256` (session/images.ts).
 */
export interface ImagePart {
  mediaType: ImageMediaType;
  /** The bytes, base64; "" in a stored entry until the session reads them back. */
  data: string;
  /** Hex SHA-256 of the bytes: their name in the session's image folder. */
  sha256: string;
}

export interface AssistantMessage {
  role: "assistant";
  content: string;
  toolCalls?: ToolCall[];
  /**
   * Reasoning that came with the message, in order. Sent back only to the API that produced
   * it (Anthropic wants signed thinking blocks back during tool use; the Responses API its
   * reasoning items); other APIs never see it.
   */
  thinking?: ThinkingPart[];
}

/** Which wire API produced a piece of reasoning. */
export type ThinkingApi = "openai" | "openai-responses" | "anthropic";

/** One piece of model reasoning, with what its API needs to accept it back. */
export interface ThinkingPart {
  api: ThinkingApi;
  /** Readable reasoning (or its summary); empty when the API sent only an opaque form. */
  text: string;
  /** Anthropic: the thinking block's signature. */
  signature?: string;
  /** Anthropic `redacted_thinking` data, or a Responses reasoning item's `encrypted_content`. */
  data?: string;
  /** Responses: the reasoning item's id. */
  id?: string;
  /**
   * Responses: the item that came right after this reasoning item in the server's output, the
   * assistant's message or a function call. The API wants each reasoning item sent back
   * followed by its own item.
   */
  followedBy?: "message" | { callId: string };
  /**
   * Chat Completions: the delta field the text came in (`reasoning_content` or `reasoning`),
   * or `content` for thinking parts inside the content (Mistral's Magistral), never sent back.
   */
  field?: "reasoning_content" | "reasoning" | "content";
  /** Chat Completions (OpenRouter): the `reasoning_details` blocks, merged by their index. */
  details?: Record<string, unknown>[];
}

/** The observation for one tool call, tied to it by `toolCallId`. */
export interface ToolMessage {
  role: "tool";
  toolCallId: string;
  name: string;
  content: string;
  /**
   * Images the result shows (read of an image file), stored like a user message's. Each API
   * carries them its own way: inside the tool result (Anthropic, Responses) or in a user
   * message right after the tool messages (Chat Completions).
   */
  images?: ImagePart[];
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/**
 * Token usage as reported by the provider. `inputTokens` counts the whole prompt, including
 * `cachedTokens` (read from a prompt cache) and `cacheWriteTokens` (written to one);
 * `outputTokens` includes `reasoningTokens`.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Prompt tokens written to a prompt cache (Anthropic); absent when the API has none. */
  cacheWriteTokens?: number;
}

/** A usage record of all zeros. */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0 };
}

/** Adds `b` into a copy of `a`. */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
  if (a.cacheWriteTokens !== undefined || b.cacheWriteTokens !== undefined) {
    sum.cacheWriteTokens = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  }
  return sum;
}
