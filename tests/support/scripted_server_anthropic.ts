/**
 * The scripted server's Anthropic Messages dialect: request bodies back into tern's
 * ModelRequest, replies as Anthropic's named SSE events (`message_start`, one content block per
 * thinking / text / tool call with its deltas, `message_delta` with the stop reason and output
 * usage, `message_stop`), errors as `{type: "error", error: {type, message}}`.
 */
import type { AssistantMessage, Message, ThinkingPart, ToolCall } from "../../src/core/messages.ts";
import {
  MALFORMED_SSE_PAYLOAD,
  partialReply,
  scriptedFinishReason,
  type ScriptedReply,
  scriptedToolCalls,
  scriptedUsage,
  splitText,
} from "../../src/llm/scripted.ts";
import type { FinishReason, ModelRequest } from "../../src/llm/types.ts";
import { type Dialect, jsonResponse, type Step, type StepOptions } from "./scripted_dialect.ts";

/** Anthropic Messages as the scripted server speaks it. */
export const anthropicDialect: Dialect = {
  toModelRequest,
  replySteps,
  errorResponse: (status, message, headers = {}) =>
    jsonResponse(status, { type: "error", error: { type: errorType(status), message } }, headers),
};

type Block = Record<string, unknown>;

/** Reads a Messages body back into a ModelRequest, leniently. */
export function toModelRequest(body: Record<string, unknown>): ModelRequest {
  const messages: Message[] = [];
  if (typeof body.system === "string") messages.push({ role: "system", content: body.system });
  for (const block of blocksOf(body.system)) {
    if (typeof block.text === "string") messages.push({ role: "system", content: block.text });
  }
  const names = new Map<string, string>();
  for (const raw of Array.isArray(body.messages) ? body.messages : []) {
    const m = raw as Record<string, unknown>;
    if (m.role === "assistant") messages.push(assistantMessage(m.content, names));
    else messages.push(...userMessages(m.content, names));
  }
  const tools = (Array.isArray(body.tools) ? body.tools : []).map((raw) => {
    const tool = raw as Record<string, unknown>;
    return {
      name: String(tool.name ?? ""),
      description: String(tool.description ?? ""),
      parameters: (tool.input_schema ?? {}) as Record<string, unknown>,
    };
  });
  const request: ModelRequest = { model: String(body.model ?? ""), messages, tools };
  if (typeof body.max_tokens === "number") request.maxTokens = body.max_tokens;
  if (typeof body.temperature === "number") request.temperature = body.temperature;
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (thinking?.type === "enabled" && typeof thinking.budget_tokens === "number") {
    request.reasoning = { effort: "medium", budgetTokens: thinking.budget_tokens };
  }
  return request;
}

function blocksOf(content: unknown): Block[] {
  return Array.isArray(content)
    ? content.filter((b): b is Block => typeof b === "object" && b !== null)
    : [];
}

function assistantMessage(content: unknown, names: Map<string, string>): AssistantMessage {
  let text = typeof content === "string" ? content : "";
  const toolCalls: ToolCall[] = [];
  const thinking: ThinkingPart[] = [];
  for (const block of blocksOf(content)) {
    if (block.type === "text") text += String(block.text ?? "");
    if (block.type === "thinking") {
      thinking.push({
        api: "anthropic",
        text: String(block.thinking ?? ""),
        signature: String(block.signature ?? ""),
      });
    }
    if (block.type === "redacted_thinking") {
      thinking.push({ api: "anthropic", text: "", data: String(block.data ?? "") });
    }
    if (block.type === "tool_use") {
      const call = {
        id: String(block.id ?? ""),
        name: String(block.name ?? ""),
        arguments: JSON.stringify(block.input ?? {}),
      };
      names.set(call.id, call.name);
      toolCalls.push(call);
    }
  }
  const message: AssistantMessage = toolCalls.length > 0
    ? { role: "assistant", content: text, toolCalls }
    : { role: "assistant", content: text };
  if (thinking.length > 0) message.thinking = thinking;
  return message;
}

/** A user turn's blocks in order: tool results become tool messages, text user messages. */
function userMessages(content: unknown, names: Map<string, string>): Message[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const messages: Message[] = [];
  for (const block of blocksOf(content)) {
    if (block.type === "tool_result") {
      const toolCallId = String(block.tool_use_id ?? "");
      messages.push({
        role: "tool",
        toolCallId,
        name: names.get(toolCallId) ?? "",
        content: typeof block.content === "string"
          ? block.content
          : blocksOf(block.content).map((b) => String(b.text ?? "")).join(""),
      });
    } else if (block.type === "text") {
      messages.push({ role: "user", content: String(block.text ?? "") });
    }
  }
  return messages;
}

function replySteps(
  reply: ScriptedReply,
  request: ModelRequest,
  index: number,
  options: StepOptions,
): Step[] {
  const step = (event: string, data: Record<string, unknown>): Step => ({
    event,
    data: JSON.stringify({ type: event, ...data }),
  });
  let blockIndex = 0;
  const block = (start: Block, deltas: Block[]): Step[] => {
    const at = blockIndex++;
    return [
      step("content_block_start", { index: at, content_block: start }),
      ...deltas.map((delta) => step("content_block_delta", { index: at, delta })),
      step("content_block_stop", { index: at }),
    ];
  };
  const textDeltas = (text: string) =>
    splitText(text, 4).filter((part) => part !== "").map((part) => ({
      type: "text_delta",
      text: part,
    }));
  const textBlock = (text: string) =>
    text === "" ? [] : block({ type: "text", text: "" }, textDeltas(text));
  const toolStart = (call: ToolCall) => ({
    type: "tool_use",
    id: call.id,
    name: call.name,
    input: {},
  });
  const jsonDelta = (json: string) => ({ type: "input_json_delta", partial_json: json });
  const usageOf = (source: ScriptedReply) => {
    const usage = scriptedUsage(source, request);
    const cacheWrite = source.usage?.cacheWriteTokens ?? 0;
    return {
      input: Math.max(0, usage.inputTokens - usage.cachedTokens - cacheWrite),
      cacheRead: usage.cachedTokens,
      cacheWrite,
      output: usage.outputTokens,
    };
  };
  const start = (source: ScriptedReply): Step[] => {
    const usage = usageOf(source);
    return [
      step("message_start", {
        message: {
          id: `msg_scripted_${index}`,
          type: "message",
          role: "assistant",
          model: options.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: usage.input,
            cache_creation_input_tokens: usage.cacheWrite,
            cache_read_input_tokens: usage.cacheRead,
            output_tokens: 1,
          },
        },
      }),
      step("ping", {}),
    ];
  };
  const end = (finish: FinishReason, source: ScriptedReply): Step[] => [
    step("message_delta", {
      delta: { stop_reason: WIRE_STOP[finish], stop_sequence: null },
      usage: { output_tokens: usageOf(source).output },
    }),
    step("message_stop", {}),
  ];

  switch (reply.fault) {
    case "hang":
      return ["<hang>"];
    case "empty":
      return [...start({}), ...end("stop", {})];
    case "malformed_sse": {
      const first = textDeltas(reply.text ?? "").slice(0, 1).map((delta) =>
        step("content_block_delta", { index: 0, delta })
      );
      return [
        ...start(reply),
        step("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        ...first,
        { event: "content_block_delta", data: MALFORMED_SSE_PAYLOAD },
      ];
    }
    case "drop_mid_stream": {
      const { text, firstCall } = partialReply(reply);
      const steps = [...start(reply), ...textBlock(text)];
      if (firstCall !== undefined) {
        const [call] = scriptedToolCalls({ toolCalls: [firstCall] }, index);
        const at = blockIndex++;
        steps.push(
          step("content_block_start", { index: at, content_block: toolStart(call) }),
          step("content_block_delta", {
            index: at,
            delta: jsonDelta(splitText(call.arguments, 3)[0]),
          }),
        );
      }
      return [...steps, "<drop>"];
    }
  }
  const steps = start(reply);
  if (reply.thinking) {
    steps.push(...block(
      { type: "thinking", thinking: "" },
      [
        ...splitText(reply.thinking, 2).map((part) => ({ type: "thinking_delta", thinking: part })),
        { type: "signature_delta", signature: `sig-${index}` },
      ],
    ));
  }
  steps.push(...textBlock(reply.text ?? ""));
  for (const call of scriptedToolCalls(reply, index)) {
    const pieces = splitText(call.arguments, 3).map(jsonDelta);
    steps.push(...block(toolStart(call), [jsonDelta(""), ...pieces]));
  }
  return [...steps, ...end(scriptedFinishReason(reply), reply)];
}

const WIRE_STOP: Record<FinishReason, string> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  refusal: "refusal",
  pause: "pause_turn",
  other: "unlisted_reason",
};

function errorType(status: number): string {
  if (status === 400) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return "api_error";
}
