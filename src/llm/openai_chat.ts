/**
 * A Provider for OpenAI-compatible Chat Completions APIs (OpenAI, vLLM, Ollama, llama.cpp,
 * OpenRouter, ...), streaming over SSE with plain `fetch`. Makes one attempt per `stream()`;
 * retries and fallback wrap this provider from outside.
 */
import {
  abortedError,
  clientError,
  type ErrorEvent,
  errorMessageOf,
  httpErrorMessage,
  IdleTimeoutError,
  providerDetail,
  STREAM_ENDED_EARLY_MESSAGE,
  transportErrorMessage,
} from "./errors.ts";
import { ChatStreamState, toChatRequestBody } from "./openai_chat_wire.ts";
import { readSseData } from "./sse.ts";
import type { ModelRequest, Provider, StreamEvent } from "./types.ts";

export interface OpenAiChatOptions {
  /** API root including the version, e.g. `https://api.openai.com/v1`; a trailing `/` is ignored. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when given. Never appears in any event. */
  apiKey?: string;
  /** Extra request headers (they override the defaults). */
  headers?: Record<string, string>;
  /** Longest wait for the response headers, in milliseconds. Default 120,000. */
  requestTimeoutMs?: number;
  /** Longest gap between bytes of the streamed body, in milliseconds. Default 120,000. */
  idleTimeoutMs?: number;
  /** The fetch to use (tests, proxies). Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** The provider's `name`. Default `openai-chat`. */
  name?: string;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_ERROR_BODY_CHARS = 16_000;

interface Config {
  url: string;
  origin: string;
  headers: Record<string, string>;
  secrets: string[];
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  fetch: typeof fetch;
}

/**
 * Creates the provider. `stream()` POSTs `<baseUrl>/chat/completions` with `stream: true` and
 * never throws: every failure is a final `error` event (kind `aborted` when `signal` fired).
 */
export function createOpenAiChatProvider(options: OpenAiChatOptions): Provider {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  let origin: string;
  try {
    origin = new URL(baseUrl).origin;
  } catch {
    throw new TypeError(`Cannot use model API base URL ${JSON.stringify(baseUrl)}: invalid URL`);
  }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "accept": "text/event-stream",
  };
  if (options.apiKey) headers["authorization"] = `Bearer ${options.apiKey}`;
  const config: Config = {
    url: `${baseUrl}/chat/completions`,
    origin,
    headers: { ...headers, ...options.headers },
    secrets: options.apiKey ? [options.apiKey] : [],
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    fetch: options.fetch ?? globalThis.fetch,
  };
  return {
    name: options.name ?? "openai-chat",
    stream: (request, signal) => streamChat(config, request, signal),
  };
}

async function* streamChat(
  config: Config,
  request: ModelRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamEvent> {
  if (signal?.aborted) {
    yield abortedError();
    return;
  }
  let body: string;
  try {
    body = JSON.stringify(toChatRequestBody(request));
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    yield clientError(`Cannot encode model request: ${detail}`);
    return;
  }
  const controller = new AbortController();
  const forwardAbort = () => controller.abort();
  signal?.addEventListener("abort", forwardAbort, { once: true });
  let requestTimedOut = false;
  const requestTimer = setTimeout(() => {
    requestTimedOut = true;
    controller.abort();
  }, config.requestTimeoutMs);
  const failed = (error: unknown): ErrorEvent => {
    if (signal?.aborted) return abortedError();
    if (requestTimedOut) {
      return clientError(`Model API did not respond within ${config.requestTimeoutMs} ms`);
    }
    return clientError(transportErrorMessage(error, config.origin));
  };
  try {
    let response: Response;
    try {
      response = await config.fetch(config.url, {
        method: "POST",
        headers: config.headers,
        body,
        signal: controller.signal,
      });
      if (!response.ok) {
        const event = await responseError(response, config.secrets);
        yield signal?.aborted ? abortedError() : event;
        return;
      }
    } catch (error) {
      yield failed(error);
      return;
    }
    clearTimeout(requestTimer);
    if (response.body === null) {
      yield clientError("Model API sent an empty response");
      return;
    }
    if (isJson(response)) {
      yield await jsonInsteadOfStream(response, config.secrets);
      return;
    }
    yield* readChatStream(response.body, config, signal);
  } finally {
    clearTimeout(requestTimer);
    signal?.removeEventListener("abort", forwardAbort);
    // Releases the connection when the body was not read to the end.
    controller.abort();
  }
}

async function* readChatStream(
  body: ReadableStream<Uint8Array>,
  config: Config,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamEvent> {
  const state = new ChatStreamState(config.secrets);
  let sawDone = false;
  try {
    for await (const data of readSseData(body, { idleTimeoutMs: config.idleTimeoutMs })) {
      if (signal?.aborted) break;
      if (data.trim() === "[DONE]") {
        sawDone = true;
        break;
      }
      const events = state.apply(data);
      yield* events;
      if (events.at(-1)?.type === "error") return;
    }
  } catch (error) {
    if (signal?.aborted) {
      yield abortedError();
    } else if (error instanceof IdleTimeoutError) {
      yield clientError(`Model API stream stalled: no data for ${config.idleTimeoutMs} ms`);
    } else if (state.complete) {
      // The message was complete; only the trailing usage chunk or [DONE] was lost.
      yield state.finish(true);
    } else {
      yield clientError(STREAM_ENDED_EARLY_MESSAGE);
    }
    return;
  }
  yield signal?.aborted ? abortedError() : state.finish(sawDone);
}

async function responseError(response: Response, secrets: string[]): Promise<ErrorEvent> {
  const text = await readCapped(response);
  const detail = providerDetail(text, secrets) || response.statusText;
  return clientError(httpErrorMessage(response.status, detail), response.status);
}

async function jsonInsteadOfStream(response: Response, secrets: string[]): Promise<ErrorEvent> {
  const text = await readCapped(response);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Reported below without detail.
  }
  const message = errorMessageOf(parsed);
  return clientError(
    message === undefined
      ? "Model API sent JSON instead of an event stream"
      : `Model API error: ${providerDetail(message, secrets)}`,
  );
}

/** Reads at most MAX_ERROR_BODY_CHARS of a body; a body that fails to read counts as empty. */
async function readCapped(response: Response): Promise<string> {
  try {
    const text = await response.text();
    return text.slice(0, MAX_ERROR_BODY_CHARS);
  } catch {
    return "";
  }
}

function isJson(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").includes("application/json");
}
