/**
 * The scripted server's Chat Completions dialect: request bodies back into tern's ModelRequest,
 * replies as OpenAI-style chunks (text in several chunks, reasoning as `reasoning_content`,
 * tool-call arguments in at least three deltas keyed by index, interleaved across parallel
 * calls, a usage chunk when asked).
 */
import type { Message, ToolCall } from "../../src/core/messages.ts";
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

/** Chat Completions as the scripted server speaks it. */
export const chatDialect: Dialect = {
  toModelRequest,
  replySteps,
  errorResponse: (status, message, headers = {}) =>
    jsonResponse(status, { error: { message, type: "scripted_error", code: status } }, headers),
};

/** Reads a Chat Completions body back into a ModelRequest, leniently. */
export function toModelRequest(body: Record<string, unknown>): ModelRequest {
  const names = new Map<string, string>();
  const messages: Message[] = [];
  for (const raw of Array.isArray(body.messages) ? body.messages : []) {
    const m = raw as Record<string, unknown>;
    const content = contentText(m.content);
    if (m.role === "assistant") {
      const calls = (Array.isArray(m.tool_calls) ? m.tool_calls : []).map((c) => {
        const call = c as { id?: string; function?: { name?: string; arguments?: string } };
        names.set(call.id ?? "", call.function?.name ?? "");
        return {
          id: call.id ?? "",
          name: call.function?.name ?? "",
          arguments: call.function?.arguments ?? "",
        };
      });
      messages.push(
        calls.length > 0
          ? { role: "assistant", content, toolCalls: calls }
          : { role: "assistant", content },
      );
    } else if (m.role === "tool") {
      const toolCallId = String(m.tool_call_id ?? "");
      messages.push({ role: "tool", toolCallId, name: names.get(toolCallId) ?? "", content });
    } else {
      messages.push({ role: m.role === "system" ? "system" : "user", content });
    }
  }
  const tools = (Array.isArray(body.tools) ? body.tools : []).map((t) => {
    const fn = (t as { function?: Record<string, unknown> }).function ?? {};
    return {
      name: String(fn.name ?? ""),
      description: String(fn.description ?? ""),
      parameters: (fn.parameters ?? {}) as Record<string, unknown>,
    };
  });
  const request: ModelRequest = { model: String(body.model ?? ""), messages, tools };
  if (typeof body.max_tokens === "number") request.maxTokens = body.max_tokens;
  if (typeof body.max_completion_tokens === "number") {
    request.maxTokens = body.max_completion_tokens;
  }
  if (typeof body.temperature === "number") request.temperature = body.temperature;
  const effort = body.reasoning_effort ??
    (body.reasoning as { effort?: unknown } | undefined)?.effort;
  if (typeof effort === "string") {
    request.reasoning = {
      effort: effort as "minimal" | "low" | "medium" | "high",
      budgetTokens: 0,
    };
  }
  return request;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part as { text?: unknown }).text).filter((t) =>
    typeof t === "string"
  )
    .join("");
}

function replySteps(
  reply: ScriptedReply,
  request: ModelRequest,
  index: number,
  options: StepOptions,
): Step[] {
  const includeUsage = (options.body.stream_options as { include_usage?: unknown } | undefined)
    ?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({
      id: `chatcmpl-${index}`,
      object: "chat.completion.chunk",
      created: 0,
      model: options.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  const ending = (finish: FinishReason, usageOf: ScriptedReply): Step[] => {
    const usage = scriptedUsage(usageOf, request);
    const steps: Step[] = [chunk({}, WIRE_FINISH[finish])];
    if (includeUsage) {
      steps.push(JSON.stringify({
        id: `chatcmpl-${index}`,
        object: "chat.completion.chunk",
        created: 0,
        model: options.model,
        choices: [],
        usage: {
          prompt_tokens: usage.inputTokens,
          completion_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
          prompt_tokens_details: { cached_tokens: usage.cachedTokens },
          completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
        },
      }));
    }
    return [...steps, "[DONE]"];
  };
  const role = chunk({ role: "assistant", content: "" });
  const textSteps = (text: string) =>
    splitText(text, 4).filter((part) => part !== "").map((part) => chunk({ content: part }));

  switch (reply.fault) {
    case "hang":
      return ["<hang>"];
    case "empty":
      return [role, ...ending("stop", {})];
    case "malformed_sse":
      return [role, ...textSteps(reply.text ?? "").slice(0, 1), MALFORMED_SSE_PAYLOAD];
    case "drop_mid_stream": {
      const { text, firstCall } = partialReply(reply);
      const steps: Step[] = [role, ...textSteps(text)];
      if (firstCall !== undefined) {
        const [call] = scriptedToolCalls({ toolCalls: [firstCall] }, index);
        steps.push(
          chunk({ tool_calls: [toolCallDelta(0, call, splitText(call.arguments, 3)[0])] }),
        );
      }
      return [...steps, "<drop>"];
    }
  }
  const calls = scriptedToolCalls(reply, index);
  const pieces = calls.map((call) => splitText(call.arguments, 3));
  const thinkingSteps = splitText(reply.thinking ?? "", 2).filter((part) => part !== "").map((
    part,
  ) => chunk({ reasoning_content: part }));
  const steps: Step[] = [role, ...thinkingSteps, ...textSteps(reply.text ?? "")];
  for (let part = 0; part < 3; part++) {
    calls.forEach((call, i) => {
      const delta = part === 0
        ? toolCallDelta(i, call, pieces[i][0])
        : { index: i, function: { arguments: pieces[i][part] } };
      steps.push(chunk({ tool_calls: [delta] }));
    });
  }
  return [...steps, ...ending(scriptedFinishReason(reply), reply)];
}

/** Chat has no pause; it and `other` go out as a reason the API does not list. */
const WIRE_FINISH: Record<FinishReason, string> = {
  stop: "stop",
  tool_calls: "tool_calls",
  length: "length",
  refusal: "content_filter",
  pause: "unlisted_reason",
  other: "unlisted_reason",
};

function toolCallDelta(index: number, call: ToolCall, args: string) {
  return { index, id: call.id, type: "function", function: { name: call.name, arguments: args } };
}
