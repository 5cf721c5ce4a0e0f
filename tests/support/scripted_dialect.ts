/**
 * How the scripted server speaks one model API: reading request bodies back into tern's shape,
 * streaming a scripted reply as that API's SSE events, and shaping error bodies.
 */
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";

/**
 * A step of a response body: an SSE `data:` payload, a named event, or a way to stop
 * (`<drop>` errors the connection, `<hang>` stalls until the client or server gives up).
 */
export type Step = string | { event: string; data: string } | "<drop>" | "<hang>";

/** What a dialect gets besides the reply. */
export interface StepOptions {
  /** The model id to put in events. */
  model: string;
  /** The request body as sent. */
  body: Record<string, unknown>;
}

export interface Dialect {
  /** Reads a request body back into a ModelRequest, leniently. */
  toModelRequest(body: Record<string, unknown>): ModelRequest;
  /** The SSE steps of `reply` (faults included, except the HTTP ones the server handles). */
  replySteps(
    reply: ScriptedReply,
    request: ModelRequest,
    index: number,
    options: StepOptions,
  ): Step[];
  /** An error response in the API's own shape. */
  errorResponse(status: number, message: string, headers?: Record<string, string>): Response;
}

/** A JSON response. */
export function jsonResponse(
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
