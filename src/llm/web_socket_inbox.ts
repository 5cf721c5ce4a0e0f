/**
 * A client WebSocket read as a queue of text messages: opened with headers, read one message
 * at a time with an idle limit and a signal, closed once. Nothing here knows the API it carries
 * beyond this: a message answers the last one sent, until the reader says the answer ended
 * (`settle()`); what the server sends between answers is dropped, never read as the next one.
 * Both are capped: past the cap ahead of the reader (an answer too large) or between answers (a
 * flood), the socket closes.
 *
 * It uses the `ws` package, not Deno's own `WebSocket`: Deno 2.9.6's client writes a frame's
 * header and its payload as two TCP writes without TCP_NODELAY, so any message of about 2 KB
 * to 64 KB waits for the server's delayed ACK (about 40 ms on Linux) before its payload
 * leaves — measured in bench/results/responses_transport.md. `ws` sets TCP_NODELAY.
 */
// @ts-types="@types/ws"
import WebSocket from "ws";
import { IdleTimeoutError, StreamTooLargeError, tooLargeMessage } from "./errors.ts";
import { MAX_ANSWER_CHARS, MAX_EVENT_CHARS } from "./sse.ts";

/**
 * The most characters queued unread, and the most dropped between two answers, by default: one
 * answer may not be longer (the reader stops at `MAX_ANSWER_CHARS`), so no valid answer is cut.
 */
export const MAX_QUEUED_CHARS = MAX_ANSWER_CHARS;

/** The longest wait for the server to answer our close frame before the connection is cut. */
const CLOSE_ANSWER_MS = 1_000;

/** Why a socket stopped: it closed, failed to open, or was closed by us. */
export class SocketClosedError extends Error {
  override name = "SocketClosedError";
}

/** One open socket and the text messages it received but nobody read yet. */
export class WebSocketInbox {
  #socket: WebSocket;
  #messages: string[] = [];
  #queuedChars = 0;
  /** True from `send()` until `settle()`: messages then belong to that answer. */
  #answering = false;
  /** Characters dropped since the last answer ended. */
  #droppedChars = 0;
  #maxQueuedChars: number;
  #wake: (() => void) | undefined;
  #closed: string | undefined;
  #broken = false;
  #tooLarge = false;

  private constructor(socket: WebSocket, maxQueuedChars: number) {
    this.#socket = socket;
    this.#maxQueuedChars = maxQueuedChars;
    socket.on("message", (data, isBinary) => {
      // The Responses API sends text frames only; anything else is not an event, nor is a blank
      // frame (what a keep-alive would be): neither is read as one.
      if (this.#closed !== undefined || isBinary) return;
      const text = String(data);
      if (text.trim() === "") return;
      if (!this.#answering) {
        // Nothing was asked: not part of any answer, and never read as the next one's.
        this.#droppedChars += text.length;
        if (this.#droppedChars > this.#maxQueuedChars) {
          this.#fail(
            `closed: the server sent more than ${this.#maxQueuedChars} characters between answers`,
          );
        }
        return;
      }
      if (this.#queuedChars + text.length > this.#maxQueuedChars) {
        // More than one answer may hold, not yet read: the answer is too large.
        this.#tooLarge = true;
        this.#fail(`closed: the server sent more than ${this.#maxQueuedChars} characters unread`);
        return;
      }
      this.#queuedChars += text.length;
      this.#messages.push(text);
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
   * Opens `url` with `headers` within `timeoutMs`. `maxQueuedChars` (default
   * `MAX_QUEUED_CHARS`) caps the characters queued unread, and those dropped between answers.
   * @throws {SocketClosedError} when the handshake fails, times out or `signal` fires.
   */
  static async open(
    url: string,
    headers: Record<string, string>,
    options: { timeoutMs: number; signal?: AbortSignal; maxQueuedChars?: number },
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
    const inbox = new WebSocketInbox(socket, options.maxQueuedChars ?? MAX_QUEUED_CHARS);
    const { promise, resolve } = Promise.withResolvers<void>();
    // A timer of our own, cleared once the handshake ends (as in `next()`).
    const timer = setTimeout(() => {
      inbox.#closed ??= `did not open within ${options.timeoutMs} ms`;
      resolve();
    }, options.timeoutMs);
    const onAbort = () => {
      inbox.#closed ??= "aborted";
      resolve();
    };
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    socket.once("open", () => resolve());
    inbox.#wake = resolve;
    try {
      await promise;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
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

  /** True when tern closed the socket because the server sent more than the cap. */
  get broken(): boolean {
    return this.#broken;
  }

  /**
   * Sends one text message; what arrives from now on is its answer, until `settle()`.
   * @throws {SocketClosedError} when the socket is closed.
   */
  send(text: string): void {
    if (this.#closed !== undefined || this.#socket.readyState !== WebSocket.OPEN) {
      throw new SocketClosedError(`WebSocket ${this.#closed ?? "closed"}`);
    }
    this.#answering = true;
    this.#droppedChars = 0;
    this.#socket.send(text);
  }

  /**
   * The answer to the last message ended: messages queued after its end, and any that arrive
   * before the next `send()`, are dropped. A second call does nothing.
   */
  settle(): void {
    if (!this.#answering) return;
    this.#answering = false;
    this.#droppedChars = this.#queuedChars;
    this.#queuedChars = 0;
    this.#messages = [];
  }

  /**
   * The next text message, waiting at most `idleMs` for it.
   * @throws {StreamTooLargeError} once more than the cap arrived ahead of the reader.
   * @throws {SocketClosedError} once the socket closed with nothing left to read.
   * @throws {IdleTimeoutError} when nothing arrived within `idleMs`.
   * @throws {DOMException} (`AbortError`) when `signal` fired.
   */
  async next(idleMs: number, signal?: AbortSignal): Promise<string> {
    while (this.#messages.length === 0) {
      if (this.#tooLarge) {
        throw new StreamTooLargeError(tooLargeMessage("answer", this.#maxQueuedChars));
      }
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
    const message = this.#messages.shift() as string;
    this.#queuedChars -= message.length;
    return message;
  }

  /** Closes the socket; messages not read are dropped. A second call does nothing. */
  close(): void {
    this.#closed ??= "closed by tern";
    this.#messages = [];
    this.#queuedChars = 0;
    if (this.#socket.readyState === WebSocket.CONNECTING) {
      // Ends the handshake (ws reports it as an error, which the listener above takes).
      this.#socket.terminate();
    } else if (this.#socket.readyState === WebSocket.OPEN) {
      const socket = this.#socket;
      socket.close(1000);
      // A server that never answers the close frame would hold the connection, and the process
      // at its exit, for the 30 s `ws` waits: an answer takes a round trip.
      const timer = setTimeout(() => socket.terminate(), CLOSE_ANSWER_MS);
      socket.once("close", () => clearTimeout(timer));
    }
    this.#wakeReader();
  }

  /** Closes the socket for the server's fault; the reader gets `why` at once. */
  #fail(why: string): void {
    this.#broken = true;
    this.#closed ??= why;
    // At once, without the closing handshake: a flooding server would not read it anyway.
    this.#socket.terminate();
    this.close();
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
