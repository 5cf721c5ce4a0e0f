/** Server-sent events over a fetch body, with an idle timeout between reads. */
import { createParser } from "eventsource-parser";
import {
  IdleTimeoutError,
  NotAStreamError,
  SseErrorFieldError,
  StreamTooLargeError,
  tooLargeMessage,
} from "./errors.ts";
import { after, type Timer } from "../core/timer.ts";

/**
 * The most characters one event may hold (its unfinished line included): far above any real
 * event, below what would exhaust memory. 64 MiB.
 */
export const MAX_EVENT_CHARS = 64 * 1024 * 1024;
/**
 * The most characters of event data one answer may send, all events together: 64 MiB. It
 * bounds what is read, envelopes included; servers send about one token per event of 100 to
 * 340 characters, so the longest real answer (128,000 tokens) streams 12 to 45 MiB. What an
 * answer may hold, and so what the session keeps, is capped by the turn (16 MiB per answer, 64
 * MiB per turn: src/agent/output_budget.ts), below the session reader's 64 MiB line.
 */
export const MAX_ANSWER_CHARS = 64 * 1024 * 1024;

export interface SseReadOptions {
  /**
   * Longest wait for the next bytes, in milliseconds. Only time spent waiting on the network
   * counts, not time the consumer spends between events. Default: no limit.
   */
  idleTimeoutMs?: number;
  /** Most characters one event may buffer. Default `MAX_EVENT_CHARS`. */
  maxEventChars?: number;
  /** Most characters of data all events together may carry. Default `MAX_ANSWER_CHARS`. */
  maxAnswerChars?: number;
}

/**
 * Yields the `data` of each event in `body` that has any (more than whitespace), in order.
 * Throws `IdleTimeoutError` when no bytes arrive within `idleTimeoutMs`, `StreamTooLargeError`
 * when an event or all of them pass their limit, `SseErrorFieldError` at an `error:` line (after
 * the events before it) or for a JSON error body, `NotAStreamError` for a body that ended
 * without events and is no event stream at all, and rethrows read errors (a dropped
 * connection). Cancels the body when the consumer stops early or an error ends the read.
 */
export async function* readSseData(
  body: ReadableStream<Uint8Array>,
  options: SseReadOptions = {},
): AsyncGenerator<string> {
  const maxEventChars = options.maxEventChars ?? MAX_EVENT_CHARS;
  const maxAnswerChars = options.maxAnswerChars ?? MAX_ANSWER_CHARS;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  // An `error:` line takes its place among the events: those after it are not read.
  const pending: (string | SseErrorFieldError | NotAStreamError)[] = [];
  let answerChars = 0;
  let events = 0;
  // The body's start while no event came: a JSON error body labelled as a stream.
  let start = "";
  let tooLarge: StreamTooLargeError | undefined;
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onEvent: (event) => {
      // An event without data (`data:` alone) carries nothing: a keep-alive, as a comment is.
      if (event.data.trim() === "") return;
      events++;
      answerChars += event.data.length;
      if (answerChars > maxAnswerChars) {
        tooLarge ??= new StreamTooLargeError(tooLargeMessage("answer", maxAnswerChars));
      } else {
        pending.push(event.data);
      }
    },
    onError: (error) => {
      // llama.cpp sends a failure as `error: {…}` (then `data: [DONE]`). The parser hands over
      // the line when it arrives whole, as the server writes it in one piece.
      if (error.type === "unknown-field" && error.field === "error") {
        pending.push(new SseErrorFieldError(error.value ?? ""));
      }
      if (error.type !== "max-buffer-size-exceeded") return;
      tooLarge ??= new StreamTooLargeError(tooLargeMessage("event", maxEventChars));
    },
  });
  let ended = false;
  try {
    while (!ended) {
      const chunk = await readWithin(reader, options.idleTimeoutMs);
      const text = chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      if (events === 0 && start.length <= MAX_START) start += text;
      parser.feed(text);
      if (chunk.done) {
        ended = true;
        const bodyError = events === 0 ? errorBody(start) ?? foreignBody(start) : undefined;
        if (bodyError !== undefined) pending.push(bodyError);
      }
      while (pending.length > 0) {
        const item = pending.shift() as string | SseErrorFieldError | NotAStreamError;
        if (typeof item !== "string") throw item;
        yield item;
      }
      if (tooLarge !== undefined) throw tooLarge;
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** The most characters of a body without events kept to read a JSON error body from. */
const MAX_START = 64 * 1024;

/**
 * The error a whole body without events holds when it is a JSON error body (`{"error": {…}}`,
 * or vLLM's `{"object": "error", …}`), as the `error:` line llama.cpp would send with it.
 */
function errorBody(text: string): SseErrorFieldError | undefined {
  if (text.trim() === "" || text.length > MAX_START) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  const body = parsed as Record<string, unknown>;
  const error = "error" in body ? body.error : body.object === "error" ? body : undefined;
  if (typeof error === "string") return new SseErrorFieldError(error);
  if (typeof error !== "object" || error === null) return undefined;
  return new SseErrorFieldError(JSON.stringify(error));
}

/** The fields an event stream's lines start with (`""`: a comment), and llama.cpp's `error`. */
const SSE_FIELDS: ReadonlySet<string> = new Set(["", "data", "event", "id", "retry", "error"]);

/**
 * The error for a whole body without events whose first line is no line of an event stream: a
 * web page or a proxy's plain-text error sent with 200 and another type than HTML. Undefined
 * for a body of blank lines, comments or events without data (a stream with nothing in it).
 */
function foreignBody(text: string): NotAStreamError | undefined {
  const first = text.replace(/^\uFEFF/, "").split(/\r\n|\r|\n/).find((line) => line.trim() !== "");
  if (first === undefined) return undefined;
  const colon = first.indexOf(":");
  return SSE_FIELDS.has(colon === -1 ? first : first.slice(0, colon))
    ? undefined
    : new NotAStreamError(text.slice(0, MAX_START));
}

/**
 * The reader's next chunk, waiting at most `timeoutMs` (no limit when undefined, zero or not
 * finite).
 * @throws {IdleTimeoutError} when nothing arrived in time.
 */
export async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  timeoutMs: number | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  if (timeoutMs === undefined || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    return await reader.read();
  }
  let timer: Timer | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = after(timeoutMs, () => reject(new IdleTimeoutError(timeoutMs)));
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } finally {
    timer?.cancel();
  }
}
