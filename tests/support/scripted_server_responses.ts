/**
 * The scripted server's OpenAI Responses dialect: request bodies back into tern's ModelRequest,
 * replies as named Responses events with sequence numbers (a reasoning item with its summary in
 * two deltas and encrypted content, text in several deltas, each function call as its own item
 * with arguments in at least three deltas, `response.completed` or `response.incomplete` with
 * usage).
 */
import type { AssistantMessage, Message, ThinkingPart } from "../../src/core/messages.ts";
import {
  MALFORMED_SSE_PAYLOAD,
  partialReply,
  scriptedFinishReason,
  type ScriptedReply,
  scriptedToolCalls,
  scriptedUsage,
  splitText,
} from "../../src/llm/scripted.ts";
import type { FinishReason, ModelRequest, ReasoningRequest } from "../../src/llm/types.ts";
import { type Dialect, jsonResponse, type Step, type StepOptions } from "./scripted_dialect.ts";

/** The Responses API as the scripted server speaks it. */
export const responsesDialect: Dialect = {
  toModelRequest,
  replySteps,
  errorResponse: (status, message, headers = {}) =>
    jsonResponse(status, { error: { message, ...errorKind(status), param: null } }, headers),
};

/** OpenAI's error `type` and `code` for an HTTP status. */
function errorKind(status: number): { type: string; code: string | null } {
  if (status === 401) return { type: "invalid_request_error", code: "invalid_api_key" };
  if (status === 429) return { type: "requests", code: "rate_limit_exceeded" };
  if (status >= 500) return { type: "server_error", code: null };
  return { type: "invalid_request_error", code: null };
}

type Item = Record<string, unknown>;

/**
 * Reads a Responses body back into a ModelRequest, leniently. Reasoning items, an assistant
 * message and the function calls between two user-side items make one assistant message; each
 * reasoning item notes the item after it (`followedBy`).
 */
export function toModelRequest(body: Record<string, unknown>): ModelRequest {
  const messages: Message[] = [];
  if (typeof body.instructions === "string") {
    messages.push({ role: "system", content: body.instructions });
  }
  const names = new Map<string, string>();
  let open: AssistantMessage | undefined;
  const assistant = (startsTurn: boolean): AssistantMessage => {
    const busy = open !== undefined && (open.content !== "" || open.toolCalls !== undefined);
    if (open === undefined || (startsTurn && busy)) {
      open = { role: "assistant", content: "" };
      messages.push(open);
    }
    return open;
  };
  const input = typeof body.input === "string"
    ? [{ type: "message", role: "user", content: body.input }]
    : Array.isArray(body.input)
    ? body.input as Item[]
    : [];
  // The reasoning item just read: the item after it is the one it was followed by.
  let reasoning: ThinkingPart | undefined;
  for (const item of input) {
    const type = item.type ?? "message";
    const before = reasoning;
    reasoning = undefined;
    if (type === "reasoning") {
      const target = assistant(false);
      reasoning = thinkingPart(item);
      (target.thinking ??= []).push(reasoning);
    } else if (type === "message" && item.role === "assistant") {
      if (before !== undefined) before.followedBy = "message";
      assistant(before === undefined).content = contentText(item.content);
    } else if (type === "function_call") {
      const call = {
        id: String(item.call_id ?? ""),
        name: String(item.name ?? ""),
        arguments: String(item.arguments ?? ""),
      };
      if (before !== undefined) before.followedBy = { callId: call.id };
      names.set(call.id, call.name);
      (assistant(false).toolCalls ??= []).push(call);
    } else {
      open = undefined;
      if (type === "function_call_output") {
        const toolCallId = String(item.call_id ?? "");
        messages.push({
          role: "tool",
          toolCallId,
          name: names.get(toolCallId) ?? "",
          content: contentText(item.output),
        });
      } else if (type === "message") {
        const role = item.role === "system" || item.role === "developer" ? "system" : "user";
        messages.push({ role, content: contentText(item.content) });
      }
    }
  }
  const tools = (Array.isArray(body.tools) ? body.tools as Item[] : []).map((tool) => ({
    name: String(tool.name ?? ""),
    description: String(tool.description ?? ""),
    parameters: (tool.parameters ?? {}) as Record<string, unknown>,
  }));
  const request: ModelRequest = { model: String(body.model ?? ""), messages, tools };
  if (typeof body.max_output_tokens === "number") request.maxTokens = body.max_output_tokens;
  if (typeof body.temperature === "number") request.temperature = body.temperature;
  const effort = (body.reasoning as { effort?: unknown } | undefined)?.effort;
  if (typeof effort === "string") {
    request.reasoning = { effort: effort as ReasoningRequest["effort"], budgetTokens: 0 };
  }
  return request;
}

function thinkingPart(item: Item): ThinkingPart {
  const summary = Array.isArray(item.summary) ? item.summary : [];
  const part: ThinkingPart = { api: "openai-responses", text: contentText(summary) };
  if (typeof item.id === "string") part.id = item.id;
  if (typeof item.encrypted_content === "string") part.data = item.encrypted_content;
  return part;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part as { text?: unknown }).text)
    .filter((text) => typeof text === "string").join("");
}

function replySteps(
  reply: ScriptedReply,
  request: ModelRequest,
  index: number,
  options: StepOptions,
): Step[] {
  let sequence = 0;
  const step = (type: string, fields: Record<string, unknown>): Step => ({
    event: type,
    data: JSON.stringify({ type, sequence_number: sequence++, ...fields }),
  });
  const output: Item[] = [];
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: `resp_${index}`,
    object: "response",
    created_at: 0,
    status,
    model: options.model,
    output,
    ...extra,
  });
  const opening = [
    step("response.created", { response: response("in_progress") }),
    step("response.in_progress", { response: response("in_progress") }),
  ];
  const messageId = `msg_${index}`;
  const messageAdded = (outputIndex: number) => [
    step("response.output_item.added", {
      output_index: outputIndex,
      item: {
        id: messageId,
        type: "message",
        status: "in_progress",
        role: "assistant",
        content: [],
      },
    }),
    step("response.content_part.added", {
      item_id: messageId,
      output_index: outputIndex,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    }),
  ];
  const textDeltas = (text: string, outputIndex: number) =>
    splitText(text, 4).filter((part) => part !== "").map((delta) =>
      step("response.output_text.delta", {
        item_id: messageId,
        output_index: outputIndex,
        content_index: 0,
        delta,
        logprobs: [],
      })
    );
  const callItem = (call: { id: string; name: string }, i: number, args: string) => ({
    id: `fc_${index}_${i}`,
    type: "function_call",
    status: args === "" ? "in_progress" : "completed",
    arguments: args,
    call_id: call.id,
    name: call.name,
  });
  const argumentDelta = (i: number, outputIndex: number, delta: string) =>
    step("response.function_call_arguments.delta", {
      item_id: `fc_${index}_${i}`,
      output_index: outputIndex,
      delta,
    });

  switch (reply.fault) {
    case "hang":
      return ["<hang>"];
    case "empty": {
      const usage = wireUsage(scriptedUsage({}, request));
      return [
        ...opening,
        step("response.completed", { response: response("completed", { usage }) }),
      ];
    }
    case "malformed_sse":
      return [
        ...opening,
        ...messageAdded(0),
        ...textDeltas(reply.text ?? "", 0).slice(0, 1),
        { event: "response.output_text.delta", data: MALFORMED_SSE_PAYLOAD },
      ];
    case "drop_mid_stream": {
      const { text, firstCall } = partialReply(reply);
      const steps: Step[] = [...opening];
      if (text !== "") steps.push(...messageAdded(0), ...textDeltas(text, 0));
      if (firstCall !== undefined) {
        const [call] = scriptedToolCalls({ toolCalls: [firstCall] }, index);
        const outputIndex = text === "" ? 0 : 1;
        steps.push(
          step("response.output_item.added", {
            output_index: outputIndex,
            item: callItem(call, 0, ""),
          }),
          argumentDelta(0, outputIndex, splitText(call.arguments, 3)[0]),
        );
      }
      return [...steps, "<drop>"];
    }
  }

  const steps: Step[] = [...opening];
  const finish = (item: Item) => {
    steps.push(step("response.output_item.done", { output_index: output.length, item }));
    output.push(item);
  };
  if (reply.thinking) {
    const id = `rs_${index}`;
    const at = { item_id: id, output_index: output.length, summary_index: 0 };
    const summaryPart = { type: "summary_text", text: reply.thinking };
    steps.push(
      step("response.output_item.added", {
        output_index: output.length,
        item: { id, type: "reasoning", summary: [] },
      }),
      step("response.reasoning_summary_part.added", { ...at, part: { ...summaryPart, text: "" } }),
      ...splitText(reply.thinking, 2).filter((part) => part !== "").map((delta) =>
        step("response.reasoning_summary_text.delta", { ...at, delta })
      ),
      step("response.reasoning_summary_text.done", { ...at, text: reply.thinking }),
      step("response.reasoning_summary_part.done", { ...at, part: summaryPart }),
    );
    finish({ id, type: "reasoning", summary: [summaryPart], encrypted_content: `enc-${index}` });
  }
  if (reply.text) {
    const at = { item_id: messageId, output_index: output.length, content_index: 0 };
    const part = { type: "output_text", text: reply.text, annotations: [] };
    steps.push(
      ...messageAdded(output.length),
      ...textDeltas(reply.text, output.length),
      step("response.output_text.done", { ...at, text: reply.text }),
      step("response.content_part.done", { ...at, part }),
    );
    finish({
      id: messageId,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [part],
    });
  }
  scriptedToolCalls(reply, index).forEach((call, i) => {
    const at = output.length;
    steps.push(
      step("response.output_item.added", { output_index: at, item: callItem(call, i, "") }),
      ...splitText(call.arguments, 3).map((delta) => argumentDelta(i, at, delta)),
      step("response.function_call_arguments.done", {
        item_id: `fc_${index}_${i}`,
        output_index: at,
        arguments: call.arguments,
      }),
    );
    finish(callItem(call, i, call.arguments));
  });
  const usage = wireUsage(scriptedUsage(reply, request));
  const reason = scriptedFinishReason(reply);
  if (reason !== "stop" && reason !== "tool_calls") {
    const details = { reason: INCOMPLETE_REASON[reason] ?? "unlisted_reason" };
    const ended = response("incomplete", { usage, incomplete_details: details });
    return [...steps, step("response.incomplete", { response: ended })];
  }
  return [...steps, step("response.completed", { response: response("completed", { usage }) })];
}

/** Why a response is incomplete, as the API says it; other reasons go out unlisted. */
const INCOMPLETE_REASON: Partial<Record<FinishReason, string>> = {
  length: "max_output_tokens",
  refusal: "content_filter",
};

function wireUsage(usage: ReturnType<typeof scriptedUsage>) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}
