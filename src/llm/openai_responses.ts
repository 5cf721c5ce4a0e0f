/**
 * A Provider for the OpenAI Responses API (`POST /responses`), streaming over SSE with plain
 * `fetch`, or over one WebSocket per conversation (openai_responses_socket.ts) when the
 * transport says so. Nothing is stored server-side (`store: false`): reasoning travels back to
 * the API as encrypted content on the assistant messages. Makes one attempt per `stream()`;
 * retries and fallback wrap this provider from outside (router.ts).
 */
import { API_PATHS } from "./api_paths.ts";
import { type HttpProviderOptions, httpStreamConfig, postForStream } from "./http_stream.ts";
import { ResponsesStreamState, toResponsesRequestBody } from "./openai_responses_wire.ts";
import type { ResponsesSocketPool } from "./openai_responses_socket.ts";
import type { ModelRequest, Provider } from "./types.ts";

/**
 * How requests travel: `sse` is one HTTP request per round with the whole conversation;
 * `websocket` keeps one socket per conversation and sends each round's new input only, falling
 * back to SSE when the socket fails; `auto` is `websocket` at OpenAI's own API
 * (`api.openai.com`) and `sse` anywhere else.
 */
export type ResponsesTransport = "auto" | "sse" | "websocket";

/** The transports, for validation and help text. */
export const RESPONSES_TRANSPORTS: readonly ResponsesTransport[] = ["auto", "sse", "websocket"];

/** Options of the Responses provider. */
export interface ResponsesProviderOptions extends HttpProviderOptions {
  /** Default `sse`. */
  transport?: ResponsesTransport;
}

/** True when `transport` at `baseUrl` means WebSocket. */
export function usesWebSocket(transport: ResponsesTransport | undefined, baseUrl: string): boolean {
  if (transport === "websocket") return true;
  return transport === "auto" && new URL(baseUrl).hostname === "api.openai.com";
}

/**
 * Creates the provider, named `openai-responses` unless `options.name` says otherwise. The key
 * goes in `Authorization: Bearer`. `stream()` POSTs `<baseUrl>/responses` (or sends the round
 * on the conversation's WebSocket) and never throws: every failure is a final `error` event
 * (kind `aborted` when `signal` fired). `close()` closes its sockets.
 * @throws {TypeError} for an invalid base URL.
 */
export function createOpenAiResponsesProvider(options: ResponsesProviderOptions): Provider {
  const auth: Record<string, string> = options.apiKey
    ? { authorization: `Bearer ${options.apiKey}` }
    : {};
  const config = httpStreamConfig(options, API_PATHS["openai-responses"], auth);
  const overHttp = (request: ModelRequest, signal: AbortSignal | undefined) =>
    postForStream(
      config,
      () => toResponsesRequestBody(request),
      () => new ResponsesStreamState(config.secrets),
      signal,
    );
  if (!usesWebSocket(options.transport, options.baseUrl)) {
    return { name: options.name ?? "openai-responses", stream: overHttp };
  }
  let loading: Promise<ResponsesSocketPool | undefined> | undefined;
  let sockets: ResponsesSocketPool | undefined;
  let closed = false;
  // The socket code (and the ws package with Node compatibility, about 0.3 s) loads beside the
  // conversation's first request, which goes over HTTP meanwhile; the socket opens then too.
  const load = (key: string) =>
    loading ??= import("./openai_responses_socket.ts").then(
      ({ ResponsesSocketPool, socketUrl }) => {
        sockets = new ResponsesSocketPool({
          url: socketUrl(options.baseUrl),
          headers: { ...auth, ...options.headers },
          http: config,
        });
        if (closed) void sockets.close();
        else sockets.warm(key);
        return sockets;
      },
      () => undefined,
    );
  return {
    name: options.name ?? "openai-responses",
    async *stream(request, signal) {
      if (closed || request.cacheKey === undefined || sockets === undefined) {
        if (!closed && request.cacheKey !== undefined) void load(request.cacheKey);
        yield* overHttp(request, signal);
        return;
      }
      yield* sockets.stream(request, signal, () => overHttp(request, signal));
    },
    async close() {
      closed = true;
      await sockets?.close();
    },
  };
}
