/**
 * Error texts and error events shared by the providers, so the real provider and the scripted
 * one report the same failure the same way. Messages never carry keys, headers or request bodies,
 * and what they quote of a server has no escape sequence, control or bidi character left.
 */
import { TernError } from "../core/errors.ts";
import { terminalText } from "../core/terminal_text.ts";
import type { ErrorStreamEvent } from "./types.ts";

/**
 * The configuration cannot give a working model connection: an unknown provider, one without
 * an API style or base URL, a fallback naming an unknown provider, a missing key, or a model
 * override the catalog cannot apply. Bad configuration for the CLI.
 */
export class ProviderSetupError extends TernError {
  override name = "ProviderSetupError";
}

/** The final event of a stream that failed. */
export type ErrorEvent = ErrorStreamEvent;

/** Thrown by the SSE reader when no bytes arrive for the idle timeout. */
export class IdleTimeoutError extends Error {
  override name = "IdleTimeoutError";
  /** The timeout that passed, in milliseconds. */
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`No data for ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Thrown by the stream readers when a server sends more than tern reads: one event larger than
 * the event limit, or more event data in one answer than the answer limit. Not retried: a
 * server that does it once does it again.
 */
export class StreamTooLargeError extends Error {
  override name = "StreamTooLargeError";
}

/**
 * Thrown by the SSE reader for an `error:` line: not a field of the SSE standard, but where some
 * servers (llama.cpp) put the error that ends their stream, instead of in a `data:` payload.
 */
export class SseErrorFieldError extends Error {
  override name = "SseErrorFieldError";
  /** The line's value as sent (JSON text or plain text). */
  readonly value: string;
  constructor(value: string) {
    super(`Model API stream sent an error line: ${clip(value, 200)}`);
    this.value = value;
  }
}

/**
 * Thrown by the SSE reader for a body that ended without events and is no event stream (its
 * first line is none of SSE's): a proxy's page or plain-text error sent with a 200 and a type
 * such as `text/plain`. Not retried: the server answered, just not with events.
 */
export class NotAStreamError extends Error {
  override name = "NotAStreamError";
  /** The start of the body, as sent. */
  readonly text: string;
  constructor(text: string) {
    super("Model API sent something other than an event stream");
    this.text = text;
  }
}

/** The message for an event or an answer past its limit (`limit` in characters of data). */
export function tooLargeMessage(what: "event" | "answer", limit: number): string {
  const MIB = 1024 * 1024;
  const size = limit % MIB === 0 ? `${limit / MIB} MiB` : `${limit} characters`;
  return what === "event"
    ? `Model API sent an event larger than ${size}: tern stopped reading the answer`
    : `Model API sent more than ${size} in one answer: tern stopped reading it`;
}

const MAX_DETAIL_CHARS = 500;

/** Text of the error a stream ends with when the caller's signal fired. */
export const ABORTED_MESSAGE = "Model request aborted";

/** Text of the error when the connection closed before the response was complete. */
export const STREAM_ENDED_EARLY_MESSAGE = "Model API stream ended early: connection lost";

/**
 * Text of the error when a stream ended with its end marker and nothing before it: no text, no
 * finish reason, no error (a server that dropped its error, or failed before answering).
 */
export const NO_ANSWER_MESSAGE =
  "Model API ended the stream without an answer: it sent the end marker and nothing before it";

/** A client-side failure event. */
export function clientError(message: string, status?: number): ErrorEvent {
  return status === undefined
    ? { type: "error", kind: "client", message }
    : { type: "error", kind: "client", message, status };
}

/**
 * A failure that may pass if the same request is tried again (see `ErrorStreamEvent.retryable`).
 */
export function retryableError(
  message: string,
  options: { status?: number; retryAfterMs?: number } = {},
): ErrorEvent {
  const event = clientError(message, options.status);
  event.retryable = true;
  if (options.retryAfterMs !== undefined) event.retryAfterMs = options.retryAfterMs;
  return event;
}

/**
 * The error event for an error a server sent inside its stream (`{"error": …}` in a payload,
 * or llama.cpp's `error:` line): `Model API stream error: <its message>` (else its type or
 * code), with `secrets` redacted; retryable when `isRetryableStreamError()` says so.
 */
export function streamErrorEvent(error: unknown, secrets: readonly string[]): ErrorEvent {
  const fields = errorFields(error);
  const text = typeof error === "string"
    ? error
    : typeof fields.message === "string"
    ? fields.message
    : "";
  const label = [fields.type, fields.code].find((value) =>
    (typeof value === "string" && value !== "") || typeof value === "number"
  );
  const detail = providerDetail(text, secrets) ||
    (label === undefined ? "" : providerDetail(String(label), secrets)) || "unknown error";
  const message = `Model API stream error: ${detail}`;
  if (isRetryableStreamError(error)) return retryableError(message);
  return withOverflow(clientError(message), `${text} ${String(fields.code)}`);
}

/**
 * True when an error object sent inside a stream says the server failed or is busy, so the
 * same request may pass later (or on the fallback model): its `type` or `code` is
 * `server_error`, `server_is_overloaded`, `slow_down`, `rate_limit…`, `overloaded…`,
 * `service_unavailable…` or `internal…` (vLLM's `InternalServerError`), or a status of 429 or
 * 500 and above (OpenRouter's `"code": 502`). A request the server rejects
 * (`invalid_request_error`, 400) is not, and neither is an exhausted quota
 * (`insufficient_quota`, which OpenAI sends with 429).
 */
export function isRetryableStreamError(error: unknown): boolean {
  const fields = errorFields(error);
  return [fields.type, fields.code].some((value) => {
    const status = typeof value === "number"
      ? value
      : typeof value === "string" && /^\d{3}$/.test(value)
      ? Number(value)
      : undefined;
    if (status !== undefined) return status === 429 || status >= 500;
    if (typeof value !== "string") return false;
    const word = value.toLowerCase();
    return RETRYABLE_WORDS.has(word) ||
      RETRYABLE_PREFIXES.some((prefix) => word.startsWith(prefix));
  }) && !isQuotaError(error);
}

const RETRYABLE_WORDS = new Set(["server_error", "server_is_overloaded", "slow_down"]);
const RETRYABLE_PREFIXES = ["rate_limit", "overloaded", "service_unavailable", "internal"];

/**
 * True for OpenAI's exhausted quota or billing limit (`insufficient_quota`,
 * `billing_hard_limit_reached`), as an error object or a JSON error body: sent with 429 like a
 * rate limit, but no retry passes it.
 */
export function isQuotaError(error: unknown): boolean {
  const fields = errorFields(errorFields(error).error ?? error);
  return [fields.type, fields.code].some((value) =>
    value === "insufficient_quota" || value === "billing_hard_limit_reached"
  );
}

function errorFields(error: unknown): Record<string, unknown> {
  return typeof error === "object" && error !== null && !Array.isArray(error)
    ? error as Record<string, unknown>
    : {};
}

/**
 * How servers word a request longer than the model's context window: OpenAI's
 * `context_length_exceeded` ("This model's maximum context length is …"), Anthropic's "prompt is
 * too long: N tokens > M maximum", vLLM's "… maximum context length is …", Gemini's "input token
 * count … exceeds the maximum", llama.cpp's "exceeds the available context size", TGI's
 * "`inputs` tokens + `max_new_tokens` must be <= N" and "`inputs` must have less than N tokens".
 */
const CONTEXT_OVERFLOW =
  /context[_ ]length[_ ]exceeded|maximum context length|prompt is too long|context window|exceeds? the (?:maximum|available context|model's (?:maximum|context))|too many (?:input )?tokens|`inputs` (?:tokens \+ `max_new_tokens` must be <=|must have less than \d+ tokens)/i;

/** True when an error's text or code says the request outgrew the model's context window. */
export function isContextOverflow(text: string): boolean {
  return CONTEXT_OVERFLOW.test(text);
}

/** `event` marked as a context overflow when `text` (the server's own words) says it is one. */
export function withOverflow(event: ErrorEvent, text: string): ErrorEvent {
  if (isContextOverflow(text)) event.contextOverflow = true;
  return event;
}

/** HTTP statuses worth another try: timeout, conflict, rate limit and server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait a response asks for, in milliseconds: `retry-after-ms`, else `Retry-After` as
 * seconds or as an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get("retry-after-ms") ?? "");
  if (headers.has("retry-after-ms") && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after")?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The event a stream ends with when the caller aborted it. */
export function abortedError(): ErrorEvent {
  return { type: "error", kind: "aborted", message: ABORTED_MESSAGE };
}

/** `HTTP 401 from model API: Incorrect API key provided` (the detail is optional). */
export function httpErrorMessage(status: number, detail: string): string {
  return detail === ""
    ? `HTTP ${status} from model API`
    : `HTTP ${status} from model API: ${detail}`;
}

/**
 * The message when the request timeout (`requestTimeoutMs`) ended a call: before the response
 * headers came, or while the body was still streaming (`answering`).
 */
export function requestTimeoutMessage(timeoutMs: number, answering: boolean): string {
  const what = answering ? "did not finish its answer" : "did not respond";
  return `Model API ${what} within ${timeoutMs} ms (the request timeout): raise ` +
    "requestTimeoutMs or TERN_REQUEST_TIMEOUT_MS to allow longer calls";
}

/**
 * The error when the request timeout ended a call (see {@linkcode requestTimeoutMessage}):
 * retryable, but a long timeout (`longTimeout`), so the router does not try the same target
 * again.
 */
export function requestTimeoutError(timeoutMs: number, answering: boolean): ErrorEvent {
  return longTimeoutError(requestTimeoutMessage(timeoutMs, answering));
}

/** A retryable error that a long timeout ended: see `ErrorStreamEvent.longTimeout`. */
export function longTimeoutError(message: string): ErrorEvent {
  const event = retryableError(message);
  event.longTimeout = true;
  return event;
}

/** The message when no response headers came within the idle timeout (`idleTimeoutMs`). */
export function headersTimeoutMessage(idleTimeoutMs: number): string {
  return `Model API did not respond within ${idleTimeoutMs} ms (the idle timeout): raise ` +
    "idleTimeoutMs or TERN_IDLE_TIMEOUT_MS for a server that takes longer to start answering";
}

/**
 * The message when a stream sent no content for `timeoutMs`, only keep-alive comments or empty
 * events (five idle timeouts, `idleTimeoutMs`).
 */
export function noProgressMessage(timeoutMs: number): string {
  return `Model API sent no content for ${timeoutMs} ms, only keep-alives or empty events ` +
    "(the limit is five idle timeouts): raise idleTimeoutMs or TERN_IDLE_TIMEOUT_MS to wait longer";
}

/**
 * The message for a successful response of another media type than an event stream, quoting
 * the start of what it said (`detail`, already clipped and redacted; may be empty).
 */
export function streamExpectedMessage(mediaType: string | undefined, detail: string): string {
  const what = mediaType === undefined
    ? "an answer without a content type"
    : JSON.stringify(mediaType);
  const sent = `Model API sent ${what} instead of an event stream`;
  return detail === "" ? sent : `${sent}: ${JSON.stringify(clip(detail, 200))}`;
}

/** The message for a `data:` payload that is not JSON; quotes the start of the payload. */
export function malformedEventMessage(data: string): string {
  const start = JSON.stringify(clip(terminalText(data), 80));
  return `Cannot parse model API stream event ${start}: invalid JSON`;
}

/**
 * The provider's own message from an error body: `error.message` of a JSON body, else the
 * trimmed text. Clipped, and with every `secrets` entry replaced by `[redacted]`, because some
 * APIs echo the key they rejected.
 */
export function providerDetail(bodyText: string, secrets: readonly string[]): string {
  let detail = bodyText.trim();
  try {
    const parsed: unknown = JSON.parse(bodyText);
    const message = errorMessageOf(parsed);
    if (message !== undefined) detail = message;
  } catch {
    // Not JSON: the raw text is the best detail there is.
  }
  // Escape sequences go before the key is looked for: one put inside an echoed key would
  // otherwise hide it from `redact()`, then vanish at the terminal and show the key whole.
  return clip(redact(terminalText(detail).replace(/\s+/g, " "), secrets), MAX_DETAIL_CHARS);
}

/**
 * The message of a parsed JSON error body, if it has one: `error.message` or a string `error`
 * (OpenAI, Anthropic and most others), a top-level `message` or FastAPI's `detail` (vLLM's
 * `{"object": "error", "message": …}`), or the first element's of an array (Gemini's
 * OpenAI-compatible endpoint sends `[{"error": {…}}]`).
 */
export function errorMessageOf(value: unknown): string | undefined {
  const body = Array.isArray(value) ? value[0] : value;
  if (typeof body !== "object" || body === null) return undefined;
  if ("error" in body) {
    const error = body.error;
    if (typeof error === "string") return error;
    if (typeof error === "object" && error !== null && "message" in error) {
      return typeof error.message === "string" ? error.message : undefined;
    }
    return undefined;
  }
  if ("message" in body && typeof body.message === "string") return body.message;
  if ("detail" in body && typeof body.detail === "string") return body.detail;
  return undefined;
}

/**
 * Describes why `fetch` itself failed (no HTTP response), naming only the server's origin:
 * `Cannot connect to model API at "http://127.0.0.1:8080": connection refused`.
 */
export function transportErrorMessage(error: unknown, origin: string): string {
  const text = causeText(error);
  const reason = /connection refused/i.test(text)
    ? "connection refused"
    : /connection reset/i.test(text)
    ? "connection reset"
    : isHostNotFound(error)
    ? `host ${JSON.stringify(hostOf(origin))} not found (its name does not resolve): check ` +
      'the base URL (--base-url, TERN_BASE_URL or "baseUrl" in the config) and your network'
    : DNS_FAILURE.test(text)
    ? "DNS lookup failed for a while (temporary failure in name resolution): check your network"
    : /certificate|tls|ssl/i.test(text)
    ? "TLS handshake failed"
    : isBlockedPort(error)
    ? `its port is one fetch never connects to (a "bad port", such as 9, 25 or 6000): ` +
      'give the base URL (--base-url, TERN_BASE_URL or "baseUrl" in the config) another port'
    : clip(terminalText(text).replace(/\s+/g, " ").trim(), 200);
  return `Cannot connect to model API at ${JSON.stringify(origin)}: ${reason}`;
}

/** How resolvers word a failed lookup (glibc, musl, macOS, Windows, Deno's own). */
const DNS_FAILURE =
  /dns error|failed to lookup|name or service not known|no address associated with hostname|nodename nor servname|no such host|name resolution/i;
/** A lookup that may pass later: no name server answered (EAI_AGAIN), or not in time. */
const DNS_TRANSIENT = /temporary failure|try again|timed? ?out/i;

/**
 * True when `fetch` failed because the server's name does not resolve (no such host, no
 * address for it). Trying again gives the same answer, unlike a lookup the resolver could not
 * finish (`Temporary failure in name resolution`), which is not one.
 */
export function isHostNotFound(error: unknown): boolean {
  const text = causeText(error);
  return DNS_FAILURE.test(text) && !DNS_TRANSIENT.test(text);
}

/**
 * True when `fetch` refused the URL's port itself (the Fetch standard's "bad ports", which Deno
 * blocks before any connection): the same every time.
 */
export function isBlockedPort(error: unknown): boolean {
  return /Requests to port \d+ are blocked/.test(causeText(error));
}

/** The host of `origin` (`api.example.com`), or `origin` itself when it is no URL. */
function hostOf(origin: string): string {
  return URL.canParse(origin) ? new URL(origin).hostname : origin;
}

/** The messages of `error` and its causes, without the URLs in them (a host may read as words). */
function causeText(error: unknown): string {
  return causeChain(error).join(": ").replace(/\(?https?:\/\/\S+\)?/g, "");
}

function causeChain(error: unknown): string[] {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    parts.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts;
}

/** Request headers whose value is a credential: `Authorization`, `x-api-key`, `Cookie`, …. */
const CREDENTIAL_HEADER = /auth|key|token|secret|cookie|session|passw/i;

/** The names of `headers` that carry a credential (see `secretsOf()`), never their values. */
export function credentialHeaderNames(headers: Record<string, string> = {}): string[] {
  return Object.keys(headers).filter((name) => CREDENTIAL_HEADER.test(name));
}

/**
 * What error texts and streamed payloads never show, for a request sent with `apiKey` and
 * `headers`: the key, and the value of each header named like a credential, with the token
 * after its scheme (`Bearer <token>`) too. A gateway's key configured as a header
 * (`cf-aig-authorization`, `Helicone-Auth`) is as secret as the provider's.
 */
export function secretsOf(
  apiKey: string | undefined,
  headers: Record<string, string> = {},
): string[] {
  const secrets = apiKey ? [apiKey] : [];
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADER.test(name)) continue;
    const token = value.trim().replace(/^[A-Za-z-]+\s+/, "");
    for (const secret of new Set([value.trim(), token])) {
      if (secret.length >= 8 && !secrets.includes(secret)) secrets.push(secret);
    }
  }
  return secrets;
}

/**
 * The shortest key taken out of a server's stream: real keys are longer, and a shorter stand-in
 * (`ollama`, `EMPTY`, `lm-studio`) would take words out of the answer.
 */
const MIN_STREAMED_SECRET_CHARS = 16;

/**
 * One payload of a server's stream with each of `secrets` (16 characters or more) replaced by
 * `[REDACTED]` (the marker the session's masker puts for a known key, so an answer reads as it
 * did when only the masker took the key out), before anything reads it: a server that echoes
 * the key it was sent, in an error's code, in a payload that is not JSON, in a field of the
 * wrong type or in its answer, must not put it on the terminal or in the session. Error texts
 * quote a payload clipped, so the key is taken out before, not from the message.
 */
export function withoutSecrets(data: string, secrets: readonly string[]): string {
  let result = data;
  for (const secret of secrets) {
    if (secret.length >= MIN_STREAMED_SECRET_CHARS && result.includes(secret)) {
      result = result.replaceAll(secret, "[REDACTED]");
    }
  }
  return result;
}

function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length >= 4) result = result.replaceAll(secret, "[redacted]");
  }
  return result;
}

/** `text` cut to `max` characters, with `…` when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
