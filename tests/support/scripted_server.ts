/**
 * A scripted model server on 127.0.0.1 for tests and benchmarks. It speaks OpenAI Chat
 * Completions (`POST /v1/chat/completions`), the OpenAI Responses API (`POST /v1/responses`)
 * and Anthropic Messages (`POST /v1/messages`), each through its dialect module, streaming
 * each reply of a `Script` as that API's SSE events, and can simulate faults.
 *
 * `/v1/responses` also takes WebSocket connections (OpenAI's WebSocket mode,
 * scripted_server_socket.ts): `response.create` events answered with the same events as text
 * frames, `previous_response_id` resolved against the socket's last response.
 *
 * As a program: `deno run --allow-net=127.0.0.1 --allow-read scripted_server.ts script.json
 * [requests.jsonl]` prints `LISTENING <baseUrl>` and serves until killed; each chat request is
 * appended to the optional JSONL file.
 */
import {
  parseScript,
  type Script,
  SCRIPTED_HTTP_FAULTS,
  scriptedReplyFor,
  scriptedRetryAfter,
} from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { type Dialect, jsonResponse, type Step } from "./scripted_dialect.ts";
import { anthropicDialect } from "./scripted_server_anthropic.ts";
import { chatDialect } from "./scripted_server_wire.ts";
import { responsesDialect } from "./scripted_server_responses.ts";
import { ScriptedSockets } from "./scripted_server_socket.ts";
import { sleep, waitFor } from "./abortable_wait.ts";

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
  /** `websocket` for a `response.create` event on a socket; absent for HTTP. */
  transport?: "websocket";
  /** Bytes of the request body (or of the WebSocket message) as sent. */
  bytes: number;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  /** Chat completion requests in arrival order. */
  requests: RecordedRequest[];
  /** Ends hanging streams and stops the server. */
  close(): Promise<void>;
  /** WebSocket connections accepted so far, and how many of them are still open. */
  sockets: { opened: number; open: number };
  /** Forgets every socket's last response: the next `previous_response_id` is not found. */
  forgetResponses(): void;
}

export interface ScriptedServerOptions {
  /** Pause before each SSE chunk, in milliseconds. Default 1. */
  chunkDelayMs?: number;
  /** Model id listed by `GET /v1/models` and put in chunks. Default `scripted-model`. */
  model?: string;
  /** Called with each chat request once it is recorded. */
  onRequest?: (request: RecordedRequest) => void;
  /**
   * Awaited before the reply to each request is chosen: holds a reply back until the test
   * lets it go (a real condition, not a delay).
   */
  beforeReply?: (request: ModelRequest) => Promise<void>;
  /** False: WebSocket handshakes are refused (404). Default true. */
  webSocket?: boolean;
}

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

  const sockets = new ScriptedSockets();
  const record = (recorded: RecordedRequest): number => {
    requests.push(recorded);
    options.onRequest?.(recorded);
    return requests.length - 1;
  };
  const handle = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (req.headers.get("upgrade")?.toLowerCase() === "websocket" && path === "/v1/responses") {
      if (options.webSocket === false) return errorResponse(404, "No WebSocket here");
      return sockets.accept(req, {
        script,
        model,
        delayMs,
        closing: closing.signal,
        record,
        beforeReply: options.beforeReply,
      });
    }
    if (req.method === "GET" && path === "/v1/models") {
      return jsonResponse(200, {
        object: "list",
        data: [{ id: model, object: "model", created: 0, owned_by: "tern" }],
      });
    }
    const dialect = req.method === "POST" ? DIALECTS[path] : undefined;
    if (dialect === undefined) {
      return errorResponse(404, `No route for ${req.method} ${path}`);
    }
    let body: Record<string, unknown>;
    let bytes = 0;
    try {
      const raw = new Uint8Array(await req.arrayBuffer());
      bytes = raw.length;
      const parsed: unknown = JSON.parse(new TextDecoder().decode(raw));
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
      modelRequest: dialect.toModelRequest(body),
      bytes,
    };
    const index = record(recorded);
    await options.beforeReply?.(recorded.modelRequest);
    const reply = scriptedReplyFor(script, recorded.modelRequest, index);
    if ("error" in reply) return dialect.errorResponse(500, reply.error);
    if (reply.fault !== undefined && reply.fault in SCRIPTED_HTTP_FAULTS) {
      const fault = reply.fault as keyof typeof SCRIPTED_HTTP_FAULTS;
      const { status, message } = SCRIPTED_HTTP_FAULTS[fault];
      const retryAfter = scriptedRetryAfter(reply);
      const headers: Record<string, string> = retryAfter === undefined
        ? {}
        : { "retry-after": retryAfter };
      return dialect.errorResponse(status, message, headers);
    }
    const steps = dialect.replySteps(reply, recorded.modelRequest, index, { model, body });
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
    sockets: sockets.counts,
    forgetResponses: () => sockets.forget(),
    close: async () => {
      closing.abort();
      sockets.closeAll();
      await server.finished;
    },
  }));
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
      const text = typeof step === "string"
        ? `data: ${step}\n\n`
        : `event: ${step.event}\ndata: ${step.data}\n\n`;
      controller.enqueue(encoder.encode(text));
    },
  });
}

/** The API styles the server speaks, by request path. */
const DIALECTS: Record<string, Dialect> = {
  "/v1/chat/completions": chatDialect,
  "/v1/responses": responsesDialect,
  "/v1/messages": anthropicDialect,
};

/** An error in the OpenAI shape (`{error: {message}}`), also used for unknown routes. */
export function errorResponse(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return chatDialect.errorResponse(status, message, headers);
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
