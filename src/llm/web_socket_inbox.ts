/**
 * A client WebSocket read as a queue of text messages: opened with headers, read one message
 * at a time with an idle limit and a signal, closed once. Nothing here knows the API it carries.
 *
 * It uses the `ws` package, not Deno's own `WebSocket`: Deno 2.9.6's client writes a frame's
 * header and its payload as two TCP writes without TCP_NODELAY, so any message of about 2 KB
 * to 64 KB waits for the server's delayed ACK (about 40 ms on Linux) before its payload
 * leaves — measured in bench/results/responses_transport.md. `ws` sets TCP_NODELAY.
 */
// @ts-types="@types/ws"
import WebSocket from "ws";
import { IdleTimeoutError } from "./errors.ts";
import { MAX_EVENT_CHARS } from "./sse.ts";

/** Why a socket stopped: it closed, failed to open, or was closed by us. */
export class SocketClosedError extends Error {
  override name = "SocketClosedError";
}

/** One open socket and the text messages it received but nobody read yet. */
export class WebSocketInbox {
  #socket: WebSocket;
  #messages: string[] = [];
  #wake: (() => void) | undefined;
  #closed: string | undefined;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on("message", (data, isBinary) => {
      // The Responses API sends text frames only; anything else is not an event.
      this.#messages.push(isBinary ? "" : String(data));
      this.#wakeReader();
    });
    socket.on("close", (code, reason) => {
      const why = reason.length > 0 ? ` ${String(reason).slice(0, 200)}` : "";
      this.#closed ??= `closed (${code}${why})`;
      this.#wakeReader();
    });
    socket.on("error", (error) => {
      // The handshake's refusal ("Unexpected server response: 404") or a network error; the
      // key travels in a header and is in neither.
      this.#closed ??= `failed: ${error.message}`;
      this.#wakeReader();
    });
  }

  /**
   * Opens `url` with `headers` within `timeoutMs`.
   * @throws {SocketClosedError} when the handshake fails, times out or `signal` fires.
   */
  static async open(
    url: string,
    headers: Record<string, string>,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<WebSocketInbox> {
    const socket = new WebSocket(url, {
      headers,
      // The key is in the headers: a redirect must not take it elsewhere.
      followRedirects: false,
      perMessageDeflate: false,
      handshakeTimeout: options.timeoutMs,
      // A larger message fails the socket (close code 1009) before it is buffered whole.
      maxPayload: MAX_EVENT_CHARS,
    });
    const inbox = new WebSocketInbox(socket);
    const stop = AbortSignal.any([
      AbortSignal.timeout(options.timeoutMs),
      ...(options.signal ? [options.signal] : []),
    ]);
    const { promise, resolve } = Promise.withResolvers<void>();
    const onStop = () => {
      inbox.#closed ??= options.signal?.aborted
        ? "aborted"
        : `did not open within ${options.timeoutMs} ms`;
      resolve();
    };
    stop.addEventListener("abort", onStop, { once: true });
    socket.once("open", () => resolve());
    inbox.#wake = resolve;
    try {
      await promise;
    } finally {
      stop.removeEventListener("abort", onStop);
      inbox.#wake = undefined;
    }
    if (inbox.#closed !== undefined || socket.readyState !== WebSocket.OPEN) {
      inbox.close();
      throw new SocketClosedError(`WebSocket ${inbox.#closed ?? "failed"}`);
    }
    return inbox;
  }

  /** True once the socket closed or failed. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /**
   * Sends one text message.
   * @throws {SocketClosedError} when the socket is closed.
   */
  send(text: string): void {
    if (this.#closed !== undefined || this.#socket.readyState !== WebSocket.OPEN) {
      throw new SocketClosedError(`WebSocket ${this.#closed ?? "closed"}`);
    }
    this.#socket.send(text);
  }

  /**
   * The next text message, waiting at most `idleMs` for it.
   * @throws {SocketClosedError} once the socket closed with nothing left to read.
   * @throws {IdleTimeoutError} when nothing arrived within `idleMs`.
   * @throws {DOMException} (`AbortError`) when `signal` fired.
   */
  async next(idleMs: number, signal?: AbortSignal): Promise<string> {
    while (this.#messages.length === 0) {
      if (this.#closed !== undefined) throw new SocketClosedError(`WebSocket ${this.#closed}`);
      signal?.throwIfAborted();
      const { promise, resolve } = Promise.withResolvers<void>();
      this.#wake = resolve;
      // A timer of our own, cleared once the wait ends: an `AbortSignal.timeout()` per message
      // stays armed after its read and keeps the process alive for `idleMs` after the last.
      let idle = false;
      const timer = setTimeout(() => {
        idle = true;
        resolve();
      }, idleMs);
      const onAbort = () => resolve();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        await promise;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.#wake = undefined;
      }
      if (this.#messages.length === 0 && this.#closed === undefined) {
        signal?.throwIfAborted();
        if (idle) throw new IdleTimeoutError(idleMs);
      }
    }
    return this.#messages.shift() as string;
  }

  /** Closes the socket; messages not read are dropped. A second call does nothing. */
  close(): void {
    this.#closed ??= "closed by tern";
    this.#messages = [];
    if (this.#socket.readyState === WebSocket.CONNECTING) {
      // Ends the handshake (ws reports it as an error, which the listener above takes).
      this.#socket.terminate();
    } else if (this.#socket.readyState === WebSocket.OPEN) {
      this.#socket.close(1000);
    }
    this.#wakeReader();
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
