/**
 * The Responses API over WebSocket (OpenAI's "WebSocket mode"): one socket per conversation
 * (the request's `cacheKey`), each round a `response.create` event with the same body fields
 * as the HTTP request. When the conversation so far is what the socket's last response
 * already holds, only the new input items go, with `previous_response_id`; the server keeps
 * that response in memory on the socket (it works with `store: false`).
 *
 * The server's events are the SSE events, so `ResponsesStreamState` reads them. Any failure
 * of the socket (refused, dropped, stalled, a handshake not answered within the idle timeout,
 * a server sending more than the inbox holds, a WebSocket-only error code) falls back to HTTP
 * with the whole conversation within the same request; `previous_response_not_found` sends
 * the whole conversation again on the socket. A socket opens in the background, shared by the
 * conversation's requests: each waits for it only until its own signal fires. Loaded only when
 * a request takes this path.
 */
import {
  abortedError,
  clientError,
  longTimeoutError,
  noProgressMessage,
  providerDetail,
  requestTimeoutError,
  StreamTooLargeError,
  tooLargeMessage,
  withoutSecrets,
} from "./errors.ts";
import type { HttpStreamConfig } from "./http_stream.ts";
import {
  assistantItems,
  type ResponsesInputItem,
  type ResponsesRequestBody,
  ResponsesStreamState,
  toResponsesRequestBody,
} from "./openai_responses_wire.ts";
import { MAX_ANSWER_CHARS } from "./sse.ts";
import type { ModelRequest, StreamEvent } from "./types.ts";
import { WebSocketInbox } from "./web_socket_inbox.ts";
import { apiUrl } from "../core/url_text.ts";

/** What the socket's last response holds: its id, and its whole input and output as items. */
interface Chain {
  responseId: string;
  model: string;
  /** JSON of each item, in order: compared with the next request's input. */
  items: string[];
}

interface Connection {
  inbox: WebSocketInbox;
  busy: boolean;
  chain: Chain | undefined;
}

/** A socket being opened: `stop` ends its handshake (the pool closed). */
interface Opening {
  connection: Promise<Connection>;
  stop: AbortController;
}

/** Where and how the sockets connect; built once per provider. */
export interface SocketConfig {
  /** `wss://…/responses` (or `ws://` for a plain-HTTP base URL). */
  url: string;
  /** Handshake headers: the key and the provider's own headers. Never in an event. */
  headers: Record<string, string>;
  /** The HTTP config, for the fallback and the timeouts and secrets it holds. */
  http: HttpStreamConfig;
}

/** The most sockets kept open at once (one per conversation: the session, its subagents). */
const MAX_SOCKETS = 4;
/** After this many dropped sockets, the rest of the session uses HTTP only. */
const MAX_FAILURES = 3;
/** Error codes that are about the socket, not the request: answered by HTTP instead. */
const SOCKET_ERROR_CODES = new Set([
  "websocket_connection_limit_reached",
  "response_already_in_flight",
]);

/** A failure of the socket itself: the request goes over HTTP instead. */
class SocketFailure extends Error {
  override name = "SocketFailure";
}

/**
 * The answer went the progress timeout without an event that carries content, as an HTTP
 * stream may not: the socket works, so the answer over HTTP would likely stall as long.
 */
class NoProgressError extends Error {
  override name = "NoProgressError";
}

/**
 * The sockets of one provider, by conversation. A request without a `cacheKey` (a reviewer's
 * or summariser's one-off call), a conversation whose socket is busy (one response at a time
 * per socket), or a provider whose sockets keep failing goes over HTTP.
 */
export class ResponsesSocketPool {
  #config: SocketConfig;
  #connections = new Map<string, Connection>();
  /** Sockets being opened, by conversation: a request waits for the one under way. */
  #opening = new Map<string, Opening>();
  #failures = 0;
  #disabled = false;
  #closed = false;

  constructor(config: SocketConfig) {
    this.#config = config;
  }

  /**
   * Streams `request`, over the conversation's socket when it can, else through `http` (which
   * sends the whole conversation). The request timeout bounds the response on the socket as it
   * does an HTTP call; the idle timeout bounds the handshake, as it does the wait for an HTTP
   * answer's headers. `signal` ends any wait at once, the one for a socket another request or
   * `warm()` is opening included. Never throws; ends with one `done` or `error` event.
   */
  async *stream(
    request: ModelRequest,
    signal: AbortSignal | undefined,
    http: () => AsyncIterable<StreamEvent>,
  ): AsyncGenerator<StreamEvent> {
    const key = request.cacheKey;
    let existing = key === undefined ? undefined : this.#connections.get(key);
    if (key !== undefined && existing !== undefined && !existing.busy && existing.inbox.closed) {
      // Closed between answers: by the server (its idle limit), or by the inbox's cap.
      this.#drop(key, existing, existing.inbox.broken);
      existing = undefined;
    }
    if (key === undefined || this.#disabled || this.#closed || existing?.busy) {
      yield* http();
      return;
    }
    let connection: Connection | undefined;
    let yielded = false;
    let settled = false;
    let deadline: AbortSignal | undefined;
    try {
      connection = existing !== undefined && !existing.inbox.closed
        ? existing
        : await unlessAborted((this.#opening.get(key) ?? this.#connect(key)).connection, signal);
      if (connection.busy) {
        // Another request of the conversation took the socket while it opened.
        connection = undefined;
        settled = true;
        yield* http();
        return;
      }
      connection.busy = true;
      deadline = AbortSignal.timeout(this.#config.http.requestTimeoutMs);
      const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
      for await (const event of this.#exchange(connection, request, stop)) {
        yielded ||= event.type !== "error";
        settled = event.type === "done" || event.type === "error";
        yield event;
      }
    } catch (error) {
      settled = true;
      const timedOut = deadline?.aborted === true;
      const stalled = error instanceof NoProgressError;
      if (connection !== undefined) {
        this.#drop(key, connection, !signal?.aborted && !timedOut && !stalled);
      }
      if (signal?.aborted) {
        yield abortedError();
        return;
      }
      if (timedOut) {
        // The socket worked; the answer took too long, and would over HTTP too.
        yield requestTimeoutError(this.#config.http.requestTimeoutMs, true);
        return;
      }
      if (error instanceof StreamTooLargeError) {
        yield clientError(error.message);
        return;
      }
      if (stalled) {
        yield longTimeoutError(noProgressMessage(this.#config.http.progressTimeoutMs));
        return;
      }
      // The close reason is the server's text: it may echo the key.
      const why = providerDetail(
        error instanceof Error ? error.message : String(error),
        this.#config.http.secrets,
      );
      const reason = `WebSocket to ${
        JSON.stringify(this.#config.http.origin)
      } failed (${why}); sending the request over HTTP`;
      // What streamed over the socket is void: the HTTP answer starts over.
      if (yielded) yield { type: "retry", attempt: 1, delayMs: 0, reason };
      yield* http();
    } finally {
      // A reader that stopped early leaves a response in flight on the socket: its events
      // must not reach the next request, so the socket goes.
      if (connection !== undefined && !settled) this.#drop(key, connection, false);
      if (connection !== undefined) connection.busy = false;
    }
  }

  /**
   * Opens the socket of conversation `key` in the background, so its next request finds it
   * open. A failure counts as for a request (a refused handshake means HTTP from now on).
   */
  warm(key: string): void {
    if (this.#disabled || this.#closed || this.#connections.has(key)) return;
    if (this.#opening.has(key)) return;
    this.#connect(key).connection.catch(() => {});
  }

  /** Closes every socket and ends every handshake; later requests go over HTTP. */
  close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#connections.values()) connection.inbox.close();
    this.#connections.clear();
    for (const opening of this.#opening.values()) opening.stop.abort();
    return Promise.resolve();
  }

  /**
   * Opens the socket of `key` apart from any request: one request's abort must not fail the
   * handshake another request (or `warm()`) waits for. Only `close()` stops it early.
   */
  #connect(key: string): Opening {
    const stop = new AbortController();
    const connection = this.#open(key, stop.signal).finally(() => this.#opening.delete(key));
    const opening = { connection, stop };
    this.#opening.set(key, opening);
    return opening;
  }

  async #open(key: string, stop: AbortSignal): Promise<Connection> {
    const old = this.#connections.get(key);
    if (old !== undefined) this.#drop(key, old, false);
    let inbox: WebSocketInbox;
    try {
      inbox = await WebSocketInbox.open(this.#config.url, this.#config.headers, {
        timeoutMs: this.#config.http.idleTimeoutMs,
        signal: stop,
      });
    } catch (error) {
      // A server that refuses the handshake, or never answers it, will again: HTTP from now on.
      if (!stop.aborted) this.#disabled = true;
      throw new SocketFailure(error instanceof Error ? error.message : String(error));
    }
    if (this.#closed) {
      inbox.close();
      throw new SocketFailure("provider closed");
    }
    this.#evictIdle();
    const connection: Connection = { inbox, busy: false, chain: undefined };
    this.#connections.set(key, connection);
    return connection;
  }

  /** Makes room for one more socket: the oldest idle one closes. */
  #evictIdle(): void {
    if (this.#connections.size < MAX_SOCKETS) return;
    for (const [key, connection] of this.#connections) {
      if (!connection.busy) {
        connection.inbox.close();
        this.#connections.delete(key);
        return;
      }
    }
  }

  #drop(key: string, connection: Connection, failed: boolean): void {
    connection.inbox.close();
    if (this.#connections.get(key) === connection) this.#connections.delete(key);
    if (failed && ++this.#failures >= MAX_FAILURES) this.#disabled = true;
  }

  /**
   * One response on `connection`: incremental when its chain allows, the whole conversation
   * again when the server lost the chain.
   * @throws {SocketFailure | SocketClosedError | IdleTimeoutError} when the socket fails.
   * @throws {StreamTooLargeError} when the answer passes `MAX_ANSWER_CHARS`.
   * @throws {NoProgressError} when only events without content came for the progress timeout.
   */
  async *#exchange(
    connection: Connection,
    request: ModelRequest,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<StreamEvent> {
    const body = toResponsesRequestBody(request);
    const items = body.input.map((item) => JSON.stringify(item));
    for (let full = false;; full = true) {
      const chain = full ? undefined : connection.chain;
      // Until this response completes, the socket holds no chain we can build on.
      connection.chain = undefined;
      connection.inbox.send(JSON.stringify(createEvent(body, items, chain)));
      const state = new ResponsesStreamState(this.#config.http.secrets);
      let retryFull = false;
      let answerChars = 0;
      let progressAt = performance.now();
      read: for (;;) {
        const data = await connection.inbox.next(this.#config.http.idleTimeoutMs, signal);
        answerChars += data.length;
        if (answerChars > MAX_ANSWER_CHARS) {
          throw new StreamTooLargeError(tooLargeMessage("answer", MAX_ANSWER_CHARS));
        }
        const events = state.apply(withoutSecrets(data, this.#config.http.secrets));
        // As over HTTP: events without content (`response.in_progress`, empty deltas) keep the
        // socket from idling, but not for longer than the progress timeout.
        if (events.length > 0) progressAt = performance.now();
        else if (pastTimeout(progressAt, this.#config.http.progressTimeoutMs)) {
          throw new NoProgressError();
        }
        for (const event of events) {
          if (event.type === "error") {
            const code = state.errorCode ?? "";
            if (code === "previous_response_not_found" && chain !== undefined) {
              retryFull = true;
              break read;
            }
            if (SOCKET_ERROR_CODES.has(code)) throw new SocketFailure(code);
            connection.inbox.settle();
            yield event;
            return;
          }
          yield event;
        }
        if (state.ended) break;
      }
      connection.inbox.settle();
      if (retryFull) continue;
      const final = state.finish();
      if (final.type === "done" && state.responseId !== undefined) {
        connection.chain = {
          responseId: state.responseId,
          model: request.model,
          items: [...items, ...assistantItems(final.message).map((item) => JSON.stringify(item))],
        };
      }
      yield final;
      return;
    }
  }
}

/** True once `timeoutMs` (no limit unless positive and finite) passed since `since`. */
function pastTimeout(since: number, timeoutMs: number): boolean {
  return Number.isFinite(timeoutMs) && timeoutMs > 0 && performance.now() - since > timeoutMs;
}

/**
 * `promise`, or its rejection with `signal`'s reason as soon as `signal` fires: the wait ends,
 * the work it waited for goes on (a shared handshake).
 */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  const { promise: aborted, reject } = Promise.withResolvers<never>();
  const onAbort = () => reject(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  return Promise.race([promise, aborted]).finally(() => {
    signal.removeEventListener("abort", onAbort);
  });
}

/**
 * The `response.create` event: the HTTP body without `stream`, and when `chain` holds a prefix
 * of the conversation, only what follows it with `previous_response_id`.
 */
export function createEvent(
  body: ResponsesRequestBody,
  items: string[],
  chain: Chain | undefined,
): Record<string, unknown> {
  const { stream: _stream, ...fields } = body;
  const event: Record<string, unknown> = { type: "response.create", ...fields };
  if (chain !== undefined && continues(chain, body.model, items)) {
    event.previous_response_id = chain.responseId;
    event.input = body.input.slice(chain.items.length) satisfies ResponsesInputItem[];
  }
  return event;
}

/** True when the conversation is the chain's items and then at least one more. */
function continues(chain: Chain, model: string, items: string[]): boolean {
  if (chain.model !== model || items.length <= chain.items.length) return false;
  return chain.items.every((item, i) => item === items[i]);
}

/** `https://h/v1?q=1` → `wss://h/v1/responses?q=1` (`http` → `ws`). */
export function socketUrl(baseUrl: string): string {
  const url = new URL(apiUrl(baseUrl, "/responses"));
  url.protocol = url.protocol === "http:" ? "ws:" : "wss:";
  return url.href;
}
