/**
 * What an MCP tool result becomes for the model: one Observation. Text stays text; images,
 * audio and binary resources become a one-line description (observations are text); embedded
 * text resources are inlined under their URI; `isError` becomes an ERROR observation.
 */
import type { Observation } from "../core/observation.ts";
import { indentedJson } from "../core/indented_json.ts";

/** A `tools/call` result as it arrives (the SDK's types, loosely: servers vary). */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  /** The pre-2024-11 shape some servers still send. */
  toolResult?: unknown;
}

/** The Observation for `result` of tool `name` (the name the model used). */
export function resultObservation(name: string, result: McpCallResult): Observation {
  const text = resultText(result);
  if (result.isError === true) {
    return {
      status: "ERROR",
      code: "EXECUTION_FAILED",
      message: `MCP tool "${name}" reported an error: ${text || "(no details)"}`,
    };
  }
  return { status: "SUCCEEDED", output: text };
}

/** The text of a result: its content parts, one after another, or its structured content. */
export function resultText(result: McpCallResult): string {
  const parts = Array.isArray(result.content) ? result.content.map(partText) : [];
  if (parts.length === 0 && result.structuredContent !== undefined) {
    return indentedJson(result.structuredContent, "compact");
  }
  if (parts.length === 0 && result.toolResult !== undefined) {
    return typeof result.toolResult === "string"
      ? result.toolResult
      : indentedJson(result.toolResult, "compact");
  }
  return parts.join("\n");
}

function partText(part: unknown): string {
  if (typeof part !== "object" || part === null) return String(part);
  const fields = part as Record<string, unknown>;
  switch (fields.type) {
    case "text":
      return typeof fields.text === "string" ? fields.text : "";
    case "image":
    case "audio":
      return `[${fields.type} ${mime(fields)}, ${base64Bytes(fields.data)} bytes: not shown]`;
    case "resource":
      return resourceText(fields.resource);
    case "resource_link":
      return `[resource link ${str(fields.uri)}${
        typeof fields.name === "string" ? ` (${fields.name})` : ""
      }]`;
    default:
      return `[${str(fields.type)} content: not shown]`;
  }
}

function resourceText(resource: unknown): string {
  if (typeof resource !== "object" || resource === null) return "[resource]";
  const fields = resource as Record<string, unknown>;
  const head = `[resource ${str(fields.uri)}${
    typeof fields.mimeType === "string" ? ` ${fields.mimeType}` : ""
  }]`;
  if (typeof fields.text === "string") return `${head}\n${fields.text}`;
  if (typeof fields.blob === "string") {
    return `${head.slice(0, -1)}, ${base64Bytes(fields.blob)} bytes of binary: not shown]`;
  }
  return head;
}

function mime(fields: Record<string, unknown>): string {
  return typeof fields.mimeType === "string" ? fields.mimeType : "unknown type";
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "?";
}

/** Decoded size of base64 `data` without decoding it. */
function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(clean.length * 3 / 4) - padding);
}
