/**
 * What any MCP server may make tern hold, whatever its transport: a server can send requests
 * (`ping`, unknown methods), which the SDK answers at once, echoing each id; one that sends them
 * faster than it takes the answers (a stdio server that stops reading its stdin, an HTTP server
 * that never reads the POST bodies carrying them) would have tern queue answers until its heap
 * ran out. The transport is failed instead, and closed. So is one that floods tern with messages
 * (notifications of any kind, about 100,000 a second through a pipe): each is parsed, checked and
 * handled on tern's one thread, which it held for most of a second at a time.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types";

/**
 * Characters of JSON tern has sent and the server has not taken yet, at most (one message of any
 * size is always sent).
 */
export const MAX_PENDING_CHARS = 32 * 1024 * 1024;
/** Characters a message's string `id` may have: the SDK echoes a request's id in its answer. */
export const MAX_ID_CHARS = 256;

/**
 * Messages a server may send in one second, at most: far past what a legitimate server sends (a
 * long call's progress, its log lines, one reply per request tern sends; a large `tools/list` is
 * one message, or one per page), far below a flood, and below what tern can parse (about 40,000
 * a second): a higher bound would never be reached, however fast a server wrote.
 */
export const MAX_MESSAGES_PER_SECOND = 10_000;

/** `inner` with the limits above; `label` names the server in the error (`MCP server "x"`). */
export function limitedTransport(inner: Transport, label: string): Transport & { pid?: number } {
  return new LimitedTransport(inner, label);
}

class LimitedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  readonly #inner: Transport;
  readonly #label: string;
  #pending = 0;
  #failed = false;
  /** When the current one-second window of messages began, and the messages counted in it. */
  #windowStart = -Infinity;
  #inWindow = 0;

  constructor(inner: Transport, label: string) {
    this.#inner = inner;
    this.#label = label;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      if (this.#failed) return;
      const now = performance.now();
      if (now - this.#windowStart >= 1000) {
        this.#windowStart = now;
        this.#inWindow = 0;
      }
      if (++this.#inWindow > MAX_MESSAGES_PER_SECOND) {
        this.#fail(`sent more than ${MAX_MESSAGES_PER_SECOND} messages in one second`);
        return;
      }
      const id = (message as { id?: unknown }).id;
      if (typeof id === "string" && id.length > MAX_ID_CHARS) {
        this.#fail(`sent a message whose id has ${id.length} characters`);
        return;
      }
      this.onmessage?.(message, extra);
    };
  }

  /** A stdio server's process id (its group's), for `McpConnection.kill()`. */
  get pid(): number | undefined {
    return (this.#inner as { pid?: number }).pid;
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const size = JSON.stringify(message).length;
    if (this.#failed) throw new Error(`Cannot send to ${this.#label}: the connection is closed`);
    if (this.#pending > 0 && this.#pending + size > MAX_PENDING_CHARS) {
      const waiting = `${Math.round(this.#pending / 1024 / 1024)} MiB waiting`;
      this.#fail(`does not take what tern sends (${waiting})`);
      throw new Error(`Cannot send to ${this.#label}: it does not take what tern sends`);
    }
    this.#pending += size;
    try {
      await this.#inner.send(message, options);
    } finally {
      this.#pending -= size;
    }
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #fail(why: string): void {
    if (this.#failed) return;
    this.#failed = true;
    this.onerror?.(new Error(`${this.#label} ${why}`));
    this.#inner.close().catch(() => {});
  }
}
