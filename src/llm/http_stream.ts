/**
 * The HTTP half every wire provider shares: POST a JSON body, turn error responses into error
 * events (secrets redacted, `Retry-After` read), then feed the SSE body to the API's own
 * `WireStream`. Never throws: every failure is a final `error` event.
 *
 * Timeouts bound a call, each ending the attempt with a retryable error:
 * - the request timeout (`requestTimeoutMs`, 30 min) the whole of it, from sending to the last
 *   event;
 * - the idle timeout (`idleTimeoutMs`, 2 min) the wait for the response headers and each silence
 *   of the body;
 * - the progress timeout, five idle timeouts (10 min), the time without an event that carries
 *   content (text, thinking, a piece of a tool call). Keep-alive comments (`: ping`,
 *   OpenRouter's `: OPENROUTER PROCESSING`), Anthropic's `ping` events and empty deltas keep a
 *   stream from going idle but are no progress: a model that thinks long without streaming its
 *   thinking may send only those for minutes, a stuck server for ever.
 * The request and progress timeouts are long timeouts (`longTimeout`): the router does not try
 * the same target again after one.
 */
import {
  abortedError,
  clientError,
  type ErrorEvent,
  errorMessageOf,
  headersTimeoutMessage,
  httpErrorMessage,
  IdleTimeoutError,
  isBlockedPort,
  isHostNotFound,
  isQuotaError,
  isRetryableStatus,
  longTimeoutError,
  noProgressMessage,
  NotAStreamError,
  providerDetail,
  requestTimeoutError,
  retryableError,
  retryAfterMs,
  secretsOf,
  SseErrorFieldError,
  STREAM_ENDED_EARLY_MESSAGE,
  streamErrorEvent,
  streamExpectedMessage,
  StreamTooLargeError,
  transportErrorMessage,
  withoutSecrets,
  withOverflow,
} from "./errors.ts";
import { readCappedText } from "./capped_body.ts";
import { apiUrl } from "../core/url_text.ts";
import { netDeniedMessage } from "../core/net_denied.ts";
import { readSseData } from "./sse.ts";
import type { StreamEvent } from "./types.ts";
import { phaseMark } from "../core/phase_marks.ts";
import { after, type Timer } from "../core/timer.ts";

/** Where and how to POST; built once per provider. */
export interface HttpStreamConfig {
  url: string;
  /** The server's origin, the only part of the URL error messages name. */
  origin: string;
  headers: Record<string, string>;
  /** Redacted from every error text (keys some servers echo back). */
  secrets: string[];
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  /** Longest time without an event that carries content: five idle timeouts. */
  progressTimeoutMs: number;
  fetch: typeof fetch;
}

/** One API's reading of its event stream: SSE payloads in, StreamEvents out. */
export interface WireStream {
  /** Events for one SSE `data` payload. An `error` event, if any, is last and final. */
  apply(data: string): StreamEvent[];
  /** True once the API's terminal event arrived: reading stops there. */
  readonly ended: boolean;
  /** True once the message is complete, even if the rest of the body is lost. */
  readonly complete: boolean;
  /** The final event once reading stopped (the body ended or `ended` became true). */
  finish(): StreamEvent;
}

/**
 * A bound for runaway calls, not a guess at a slow one: Anthropic's SDK plans for 128,000
 * output tokens an hour, so a 64,000-token answer may take 30 minutes.
 */
const DEFAULT_REQUEST_TIMEOUT_MS = 1_800_000;
const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
/**
 * How many idle timeouts a stream may go without content (10 minutes by default): far above
 * the few minutes a model thinks between streamed pieces, far below the request timeout, and
 * it grows with the idle timeout for a server that was given longer.
 */
const PROGRESS_IDLE_TIMEOUTS = 5;
const MAX_ERROR_BODY_CHARS = 16_000;
/** Bytes read of a body that is not a stream (an error); enough for its first 16,000 characters. */
const MAX_ERROR_BODY_BYTES = 64_000;

/** Options shared by the wire providers' constructors. */
export interface HttpProviderOptions {
  /** API root including the version, e.g. `https://api.openai.com/v1`; a trailing `/` is ignored. */
  baseUrl: string;
  /** Never appears in any event. */
  apiKey?: string;
  /** Extra request headers (they override the defaults). */
  headers?: Record<string, string>;
  /**
   * Longest time for the whole call, from sending the request to the last event of the body,
   * in milliseconds. Default 1,800,000.
   */
  requestTimeoutMs?: number;
  /**
   * Longest wait for the response headers, and longest gap between bytes of the streamed body,
   * in milliseconds. SSE comments count as bytes: some servers send them to show they are still
   * working. Five of these without any content end the call too. Default 120,000.
   */
  idleTimeoutMs?: number;
  /** The fetch to use (tests, proxies). Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** The provider's `name`. */
  name?: string;
}

/**
 * The config for POSTing to `<baseUrl><path>` with `headers` (auth included by the caller).
 * @throws {TypeError} for an invalid base URL.
 */
export function httpStreamConfig(
  options: HttpProviderOptions,
  path: string,
  headers: Record<string, string>,
): HttpStreamConfig {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  let origin: string;
  let url: string;
  try {
    origin = new URL(baseUrl).origin;
    url = apiUrl(baseUrl, path);
  } catch {
    throw new TypeError(`Cannot use model API base URL ${JSON.stringify(baseUrl)}: invalid URL`);
  }
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  return {
    url,
    origin,
    headers: {
      "content-type": "application/json",
      "accept": "text/event-stream",
      ...headers,
      ...options.headers,
    },
    secrets: secretsOf(options.apiKey, options.headers),
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    idleTimeoutMs,
    progressTimeoutMs: idleTimeoutMs * PROGRESS_IDLE_TIMEOUTS,
    fetch: options.fetch ?? globalThis.fetch,
  };
}

/** How `JSON.stringify` writes a lone surrogate (and how a backslash before "ud8"… reads). */
const LONE_SURROGATE_ESCAPE = /\\ud[89a-f]/i;

/** A `JSON.stringify` replacer: each string, and each key (a model's tool input), well-formed. */
function wellFormedStrings(_key: string, value: unknown): unknown {
  if (typeof value === "string") return value.toWellFormed();
  if (
    typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.keys(value).some((key) => !key.isWellFormed())
  ) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key.toWellFormed(), item]),
    );
  }
  return value;
}

/**
 * POSTs `encode()`'s body and streams the answer through a fresh `WireStream`. `encode` may
 * throw; that is reported as an error event, before anything is sent.
 */
export async function* postForStream(
  config: HttpStreamConfig,
  encode: () => unknown,
  newStream: () => WireStream,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamEvent> {
  if (signal?.aborted) {
    yield abortedError();
    return;
  }
  let body: string;
  try {
    const value = encode();
    body = JSON.stringify(value);
    // A lone surrogate (half of an emoji a cut left, in a tool's output, a file, a message) is
    // written as an escape that model APIs refuse, and the session would send it again with
    // every later request: each string is made well-formed (U+FFFD for each half) then. A
    // well-formed pair is written as itself, so only a lone half (or a backslash before
    // "ud8"…"udf" in the text) makes this test match.
    if (LONE_SURROGATE_ESCAPE.test(body)) body = JSON.stringify(value, wellFormedStrings);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    yield clientError(`Cannot encode model request: ${detail}`);
    return;
  }
  const controller = new AbortController();
  const forwardAbort = () => controller.abort();
  signal?.addEventListener("abort", forwardAbort, { once: true });
  let requestTimedOut = false;
  let responded = false;
  // AbortSignal.timeout, not setTimeout: Deno's global setTimeout is Node's, and its first call
  // loads the Node compatibility layer just before the first request is sent. Aborting the
  // controller also ends a body read under way.
  const requestTimeout = AbortSignal.timeout(config.requestTimeoutMs);
  const onRequestTimeout = () => {
    requestTimedOut = true;
    controller.abort();
  };
  requestTimeout.addEventListener("abort", onRequestTimeout, { once: true });
  // The wait for headers and the time without content, on Deno's timers too.
  let headersTimedOut = false;
  const headersTimer = timeoutAfter(config.idleTimeoutMs, () => {
    headersTimedOut = true;
    controller.abort();
  });
  let progressTimedOut = false;
  const progress = progressWatch(config.progressTimeoutMs, () => {
    progressTimedOut = true;
    controller.abort();
  });
  const stopped = (): ErrorEvent | undefined => {
    if (signal?.aborted) return abortedError();
    if (requestTimedOut) return requestTimeoutError(config.requestTimeoutMs, responded);
    if (headersTimedOut) return retryableError(headersTimeoutMessage(config.idleTimeoutMs));
    if (progressTimedOut) return longTimeoutError(noProgressMessage(config.progressTimeoutMs));
    return undefined;
  };
  const failed = (error: unknown): ErrorEvent => {
    if (signal?.aborted) return abortedError();
    // Trying again would be refused again: the host is outside what tern may reach.
    const denied = netDeniedMessage(error, `model API at ${JSON.stringify(config.origin)}`);
    if (denied) return clientError(denied);
    const stop = stopped();
    if (stop !== undefined) return stop;
    // A name that does not resolve is a wrong base URL or no network, not a passing fault:
    // five tries would only make the person wait for the same answer.
    const message = transportErrorMessage(error, config.origin);
    const lasting = isHostNotFound(error) || isBlockedPort(error);
    return lasting ? clientError(message) : retryableError(message);
  };
  try {
    let response: Response;
    try {
      phaseMark("request");
      response = await config.fetch(config.url, {
        method: "POST",
        headers: config.headers,
        body,
        signal: controller.signal,
        // The request carries the key: a redirect must not take it to another server.
        redirect: "manual",
      });
      headersTimer.cancel();
      if (isRedirect(response)) {
        await response.body?.cancel();
        yield clientError(redirectMessage(response, config.origin));
        return;
      }
      if (!response.ok) {
        const event = await responseError(response, config.secrets, config.idleTimeoutMs);
        yield signal?.aborted ? abortedError() : event;
        return;
      }
    } catch (error) {
      yield failed(error);
      return;
    }
    responded = true;
    phaseMark("first_byte");
    if (response.body === null) {
      yield retryableError("Model API sent an empty response");
      return;
    }
    const type = mediaType(response);
    if (type === "application/json") {
      yield await jsonInsteadOfStream(response, config);
      return;
    }
    // A web page (a proxy's login page, a web server's index) will not turn into events however
    // often asked. Any other type is read as a stream: some servers label their events
    // `text/plain` or `application/octet-stream`, and refusing them would break a working setup.
    if (type !== undefined && NOT_A_STREAM.has(type)) {
      yield await otherInsteadOfStream(response, type, config);
      return;
    }
    yield* readWireStream(response.body, newStream(), {
      idleTimeoutMs: config.idleTimeoutMs,
      secrets: config.secrets,
      mediaType: type,
      stopped,
      progressed: progress.progressed,
      completed: () => progress.endWithin(config.idleTimeoutMs),
    });
  } finally {
    headersTimer.cancel();
    progress.cancel();
    requestTimeout.removeEventListener("abort", onRequestTimeout);
    signal?.removeEventListener("abort", forwardAbort);
    // Releases the connection when the body was not read to the end.
    controller.abort();
  }
}

interface ReadOptions {
  idleTimeoutMs: number;
  /** Redacted from an error the server sends in an `error:` line. */
  secrets: readonly string[];
  /** The response's media type, for a body that is no stream; undefined when not given. */
  mediaType: string | undefined;
  /** The error for a call that the caller or a timeout stopped, once one did. */
  stopped: () => ErrorEvent | undefined;
  /** Called for each event that carries content. */
  progressed: () => void;
  /** Called for each event once the message is complete. */
  completed: () => void;
}

async function* readWireStream(
  body: ReadableStream<Uint8Array>,
  state: WireStream,
  { idleTimeoutMs, secrets, mediaType, stopped, progressed, completed }: ReadOptions,
): AsyncGenerator<StreamEvent> {
  // A timeout that ends the read once the message is complete loses only trailing events (usage,
  // the end marker), as a dropped connection does: the message stands. The caller's abort ends
  // the call whatever came.
  const stop = () => {
    const event = stopped();
    return event !== undefined && (event.kind === "aborted" || !state.complete) ? event : undefined;
  };
  try {
    for await (const data of readSseData(body, { idleTimeoutMs })) {
      if (stopped()) break;
      const events = state.apply(withoutSecrets(data, secrets));
      // A wire stream makes events only of content: an empty delta or a ping makes none.
      if (events.length > 0) progressed();
      yield* events;
      if (events.at(-1)?.type === "error") return;
      if (state.ended) break;
      // The trailing events of a complete message follow at once: keep-alives after it hold the
      // call open one idle timeout, not the progress timeout.
      if (state.complete) completed();
    }
  } catch (error) {
    const stopEvent = stop();
    if (stopEvent) {
      yield stopEvent;
    } else if (error instanceof StreamTooLargeError) {
      yield clientError(error.message);
    } else if (error instanceof NotAStreamError) {
      // A page labelled as anything but HTML (or not at all) reads as its text too.
      const text = /^\s*</.test(error.text) ? htmlText(error.text) : error.text;
      yield clientError(streamExpectedMessage(mediaType, providerDetail(text, secrets)));
    } else if (error instanceof SseErrorFieldError && !state.complete) {
      yield streamErrorEvent(parsedOrText(withoutSecrets(error.value, secrets)), secrets);
    } else if (state.complete) {
      // The message was complete; only trailing events (usage, the end marker) were lost, or
      // the server held the connection open after them.
      yield state.finish();
    } else if (error instanceof IdleTimeoutError) {
      yield retryableError(`Model API stream stalled: no data for ${idleTimeoutMs} ms`);
    } else {
      yield retryableError(STREAM_ENDED_EARLY_MESSAGE);
    }
    return;
  }
  yield stop() ?? state.finish();
}

/**
 * The error event for a non-2xx response: status, the provider's message, Retry-After. Reads
 * at most the start of the body, waiting at most `idleTimeoutMs` (default: no limit) for each
 * piece of it.
 */
export async function responseError(
  response: Response,
  secrets: string[],
  idleTimeoutMs?: number,
): Promise<ErrorEvent> {
  let text = await readCapped(response, idleTimeoutMs);
  // A proxy's error page (nginx's 502/503) reads as its text, not its markup.
  if (mediaType(response) === "text/html") text = htmlText(text);
  const detail = providerDetail(text, secrets) || response.statusText;
  const message = httpErrorMessage(response.status, detail);
  if (!isRetryableStatus(response.status) || isQuotaError(parsedOrText(text))) {
    const refused = clientError(message, response.status);
    // A request over the context window: 400 (OpenAI, Anthropic, vLLM), 413 or 422 elsewhere.
    return [400, 413, 422].includes(response.status) ? withOverflow(refused, text) : refused;
  }
  return retryableError(message, {
    status: response.status,
    retryAfterMs: retryAfterMs(response.headers),
  });
}

async function jsonInsteadOfStream(
  response: Response,
  { secrets, idleTimeoutMs }: HttpStreamConfig,
): Promise<ErrorEvent> {
  const text = await readCapped(response, idleTimeoutMs);
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

async function otherInsteadOfStream(
  response: Response,
  type: string,
  { secrets, idleTimeoutMs }: HttpStreamConfig,
): Promise<ErrorEvent> {
  let text = await readCapped(response, idleTimeoutMs);
  if (type === "text/html") text = htmlText(text);
  return clientError(streamExpectedMessage(type, providerDetail(text, secrets)));
}

/** `text` parsed when it is a JSON object (llama.cpp's `error:` line holds one), else as it is. */
function parsedOrText(text: string): unknown {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null) return parsed;
  } catch {
    // Plain text: the message itself.
  }
  return text;
}

/** Where a script, a style or a comment of a page starts. */
const HIDDEN_START = /<(script|style)\b|<!--/gi;

/**
 * The text of an HTML page, roughly: what its reader would see first, without the markup. In
 * time linear in the page: each search starts where the last one ended, a script, style or
 * comment left open runs to the end (as a browser reads it), and a tag ends at the next `<` or
 * `>`, so a server's page of thousands of unclosed `<` or `<!--` costs one pass, not their
 * square (16,000 `<` took half a second, the whole process stalled, for each answer).
 */
export function htmlText(html: string): string {
  const parts: string[] = [];
  const start = new RegExp(HIDDEN_START);
  let at = 0;
  for (let open = start.exec(html); open !== null; open = start.exec(html)) {
    parts.push(html.slice(at, open.index));
    const end = open[1] === undefined ? /-->/g : new RegExp(`</${open[1]}\\s*>`, "gi");
    end.lastIndex = start.lastIndex;
    at = end.exec(html) === null ? html.length : end.lastIndex;
    start.lastIndex = at;
  }
  parts.push(html.slice(at));
  return parts.join(" ").replace(/<[^<>]*>/g, " ");
}

/**
 * At most MAX_ERROR_BODY_CHARS of a body that is not a stream: what came before it passed
 * MAX_ERROR_BODY_BYTES or fell silent for `idleTimeoutMs`. A body that fails to read counts as
 * empty.
 */
async function readCapped(response: Response, idleTimeoutMs: number | undefined): Promise<string> {
  try {
    const { text } = await readCappedText(response.body, MAX_ERROR_BODY_BYTES, { idleTimeoutMs });
    return text.slice(0, MAX_ERROR_BODY_CHARS);
  } catch {
    return "";
  }
}

/** A timeout as settings give it: undefined (no limit) unless positive and finite. */
function limitMs(ms: number): number | undefined {
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** Calls `fn` once after `ms` (a timeout setting; never for no limit) unless cancelled first. */
function timeoutAfter(ms: number, fn: () => void): Timer {
  const within = limitMs(ms);
  return within === undefined ? { cancel() {} } : after(within, fn);
}

/**
 * Calls `expire` once nothing called `progressed()` for `ms` (a timeout setting; never for no
 * limit), or for `end` ms once `endWithin(end)` was called. One timer is pending at a time,
 * however often progress comes: a stream of thousands of small events does not start a timer
 * for each.
 */
function progressWatch(
  ms: number,
  expire: () => void,
): { progressed(): void; endWithin(end: number): void; cancel(): void } {
  const limit = limitMs(ms);
  if (limit === undefined) return { progressed() {}, endWithin() {}, cancel() {} };
  let within = limit;
  let ending = false;
  let last = performance.now();
  let timer: Timer;
  const check = () => {
    const quiet = performance.now() - last;
    if (quiet >= within) expire();
    else timer = after(within - quiet + 1, check);
  };
  timer = after(within, check);
  return {
    progressed: () => {
      last = performance.now();
    },
    endWithin: (end) => {
      const endLimit = limitMs(end);
      if (ending || endLimit === undefined) return;
      ending = true;
      timer.cancel();
      within = Math.min(within, endLimit);
      last = performance.now();
      timer = after(within, check);
    },
    cancel: () => timer.cancel(),
  };
}

/** Content types that are pages, never a stream of events. */
const NOT_A_STREAM: ReadonlySet<string> = new Set([
  "text/html",
  "application/xhtml+xml",
  "text/xml",
  "application/xml",
]);

/** The response's media type in lower case, without parameters; undefined when not given. */
function mediaType(response: Response): string | undefined {
  const type = response.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  return type === "" ? undefined : type;
}

/** True for a redirect answered to a `redirect: "manual"` request. */
export function isRedirect(response: Response): boolean {
  return response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400);
}

/**
 * Why a redirect was not followed, naming where it pointed (its origin only, never a path that
 * may hold a token): `Model API at "http://a" redirected (307) to "http://b": …`.
 */
export function redirectMessage(response: Response, origin: string): string {
  const location = response.headers.get("location");
  let target = "another address";
  if (location !== null && URL.canParse(location, origin)) {
    target = JSON.stringify(new URL(location, origin).origin);
  }
  return `Model API at ${JSON.stringify(origin)} redirected (${response.status}) to ${target}: ` +
    "tern does not follow redirects with your key; set the base URL to the server's own address";
}
