/** Reads Chat Completions request bodies back into tern's ModelRequest, for the scripted server. */
import type { Message } from "../../src/core/messages.ts";
import type { ModelRequest } from "../../src/llm/types.ts";

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
  if (typeof body.temperature === "number") request.temperature = body.temperature;
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
