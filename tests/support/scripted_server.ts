/**
 * A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for tests and benchmarks.
 * It streams each reply of a `Script` as SSE chunks the way OpenAI does (text in several chunks,
 * tool-call arguments in at least three deltas keyed by index, interleaved across parallel
 * calls, a usage chunk when asked) and can simulate faults.
 *
 * As a program: `deno run --allow-net=127.0.0.1 --allow-read scripted_server.ts script.json
 * [requests.jsonl]` prints `LISTENING <baseUrl>` and serves until killed; each chat request is
 * appended to the optional JSONL file.
 */
import type { ToolCall } from "../../src/core/messages.ts";
import {
  MALFORMED_SSE_PAYLOAD,
  parseScript,
  partialReply,
  type Script,
  SCRIPTED_HTTP_FAULTS,
  scriptedFinishReason,
  type ScriptedReply,
  scriptedReplyFor,
  scriptedToolCalls,
  scriptedUsage,
  splitText,
} from "../../src/llm/scripted.ts";
import type { FinishReason, ModelRequest } from "../../src/llm/types.ts";
import { toModelRequest } from "./scripted_server_wire.ts";

/** One chat request as the server received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  /** The body read back into tern's shape: what the script function was given. */
  modelRequest: ModelRequest;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  /** Chat completion requests in arrival order. */
  requests: RecordedRequest[];
  /** Ends hanging streams and stops the server. */
  close(): Promise<void>;
}

export interface ScriptedServerOptions {
  /** Pause before each SSE chunk, in milliseconds. Default 1. */
  chunkDelayMs?: number;
  /** Model id listed by `GET /v1/models` and put in chunks. Default `scripted-model`. */
  model?: string;
  /** Called with each chat request once it is recorded. */
  onRequest?: (request: RecordedRequest) => void;
}

/** A step of a response body: an SSE `data:` payload, or a way to stop. */
type Step = string | "<drop>" | "<hang>";

/** Starts the server on a random port. */
export function startScriptedServer(
  script: Script,
  options: ScriptedServerOptions = {},
): Promise<ScriptedServer> {
  const model = options.model ?? "scripted-model";
  const delayMs = options.chunkDelayMs ?? 1;
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  const { promise: listening, resolve: onListen } = Promise.withResolvers<Deno.NetAddr>();

  const handle = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path === "/v1/models") {
      return json(200, {
        object: "list",
        data: [{ id: model, object: "model", created: 0, owned_by: "tern" }],
      });
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return errorResponse(404, `No route for ${req.method} ${path}`);
    }
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = await req.json();
      if (typeof parsed !== "object" || parsed === null) throw new TypeError("not an object");
      body = parsed as Record<string, unknown>;
    } catch {
      return errorResponse(400, "Request body is not a JSON object");
    }
    const recorded: RecordedRequest = {
      method: req.method,
      path,
      headers: Object.fromEntries(req.headers),
      body,
      modelRequest: toModelRequest(body),
    };
    const index = requests.length;
    requests.push(recorded);
    options.onRequest?.(recorded);
    const reply = scriptedReplyFor(script, recorded.modelRequest, index);
    if ("error" in reply) return errorResponse(500, reply.error);
    if (reply.fault === "http500" || reply.fault === "http429" || reply.fault === "http401") {
      const { status, message } = SCRIPTED_HTTP_FAULTS[reply.fault];
      const headers: Record<string, string> = reply.fault === "http429"
        ? { "retry-after": "0" }
        : {};
      return errorResponse(status, message, headers);
    }
    const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)
      ?.include_usage === true;
    const steps = replySteps(reply, recorded.modelRequest, index, { model, includeUsage });
    return new Response(sseBody(steps, delayMs, closing.signal), {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  };

  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: closing.signal,
    onListen: onListen,
    // A `drop_mid_stream` body errors on purpose; keep that out of the test output.
    onError: () => new Response(null, { status: 500 }),
  }, handle);

  return listening.then((addr) => ({
    baseUrl: `http://127.0.0.1:${addr.port}/v1`,
    requests,
    close: async () => {
      closing.abort();
      await server.finished;
    },
  }));
}

interface StepOptions {
  model: string;
  includeUsage: boolean;
}

function replySteps(
  reply: ScriptedReply,
  request: ModelRequest,
  index: number,
  options: StepOptions,
): Step[] {
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
    if (options.includeUsage) {
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
  const steps: Step[] = [role, ...textSteps(reply.text ?? "")];
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

const WIRE_FINISH: Record<FinishReason, string> = {
  stop: "stop",
  tool_calls: "tool_calls",
  length: "length",
  other: "content_filter",
};

function toolCallDelta(index: number, call: ToolCall, args: string) {
  return { index, id: call.id, type: "function", function: { name: call.name, arguments: args } };
}

/**
 * A body that plays `steps`, pulling one at a time so each is written before the next. It stops
 * when the server closes or the client goes away (which cancels the body).
 */
function sseBody(steps: Step[], delayMs: number, closing: AbortSignal): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const cancelled = new AbortController();
  const stop = AbortSignal.any([closing, cancelled.signal]);
  let next = 0;
  return new ReadableStream<Uint8Array>({
    cancel() {
      cancelled.abort();
    },
    async pull(controller) {
      const step = steps[next++];
      if (step === "<hang>") await waitFor(stop);
      else if (step !== undefined && delayMs > 0) await sleep(delayMs, stop);
      if (cancelled.signal.aborted) return;
      if (step === undefined || step === "<hang>" || stop.aborted) return controller.close();
      if (step === "<drop>") return controller.error(new Error("Scripted connection drop"));
      controller.enqueue(encoder.encode(`data: ${step}\n\n`));
    },
  });
}

function json(status: number, value: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function errorResponse(status: number, message: string, headers: Record<string, string> = {}) {
  return json(status, { error: { message, type: "scripted_error", code: status } }, headers);
}

function waitFor(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

async function serveFromFile(scriptPath: string, logPath: string | undefined): Promise<void> {
  const script = parseScript(JSON.parse(await Deno.readTextFile(scriptPath)));
  if (logPath !== undefined) await Deno.writeTextFile(logPath, "");
  const server = await startScriptedServer(script, {
    onRequest: (request) => {
      if (logPath !== undefined) {
        Deno.writeTextFileSync(logPath, JSON.stringify(request) + "\n", { append: true });
      }
    },
  });
  const stop = () => void server.close().finally(() => Deno.exit(0));
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  console.log(`LISTENING ${server.baseUrl}`);
}

if (import.meta.main) {
  const [scriptPath, logPath] = Deno.args;
  if (scriptPath === undefined) {
    console.error("Usage: scripted_server.ts <script.json> [requests.jsonl]");
    Deno.exit(2);
  }
  await serveFromFile(scriptPath, logPath);
}

/** Runs `body` with a scripted server that is closed afterwards, whatever happens. */
export async function withScriptedServer(
  script: Script,
  body: (server: ScriptedServer) => Promise<void>,
  options?: ScriptedServerOptions,
): Promise<void> {
  const server = await startScriptedServer(script, options);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}
