/**
 * Model discovery: `GET <baseUrl>/models` at an OpenAI-compatible or Anthropic server, turned
 * into catalog entries. OpenAI, Anthropic, OpenRouter, vLLM, Ollama, LM Studio and llama.cpp
 * all answer `{ "data": [{ "id": … }, …] }`; the fields some add (OpenRouter's limits and prices,
 * vLLM's `max_model_len`) improve the entry, the rest get `unknownModel()` defaults.
 */
import { providerDetail, secretsOf, transportErrorMessage, withoutSecrets } from "./errors.ts";
import { isRedirect, redirectMessage } from "./http_stream.ts";
import { readCappedText } from "./capped_body.ts";
import { apiUrl } from "../core/url_text.ts";
import {
  type ApiStyle,
  type CatalogEntry,
  guessedModel,
  isListableModelId,
  isTakenPrice,
  type ModelPrice,
  unknownModel,
} from "./model_info.ts";

/** Where to list models and how to authenticate. */
export interface DiscoveryOptions {
  /** The provider preset's name, stored in each entry. */
  provider: string;
  api: ApiStyle;
  /** API root including the version, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Never appears in any error message. */
  apiKey?: string;
  /** Extra request headers (they override the defaults). */
  headers?: Record<string, string>;
  /** Longest wait for the whole answer, in milliseconds. Default 5,000. */
  timeoutMs?: number;
  /** The fetch to use. Default: the global `fetch`. */
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 5_000;
/** The largest answer read: OpenRouter's full list with all its fields is about 1 MB. */
export const MAX_MODELS_ANSWER_BYTES = 8 * 1024 * 1024;
/** Most models taken from one answer. */
export const MAX_DISCOVERED_MODELS = 2_000;
const ANTHROPIC_VERSION = "2023-06-01";
/** Anthropic pages its list (20 by default); one page of its maximum covers every model. */
const ANTHROPIC_PAGE = "?limit=1000";

/**
 * Lists the models a server offers, each with source "discovered", in the server's order
 * (duplicate ids dropped).
 * @throws {Error} `Cannot list models at "<origin>": <reason>` for an HTTP error, a
 * connection failure, a timeout, an abort or an answer without a `data` list; the key is never
 * part of the message.
 * @throws {TypeError} for an invalid base URL.
 */
export async function discoverModels(options: DiscoveryOptions): Promise<CatalogEntry[]> {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  let origin: string;
  try {
    origin = new URL(baseUrl).origin;
  } catch {
    throw new TypeError(`Cannot list models at ${JSON.stringify(baseUrl)}: invalid URL`);
  }
  const fail = (reason: string) =>
    new Error(`Cannot list models at ${JSON.stringify(origin)}: ${reason}`);
  const secrets = secretsOf(options.apiKey, options.headers);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const anthropic = options.api === "anthropic";

  const controller = new AbortController();
  const forwardAbort = () => controller.abort();
  if (options.signal?.aborted) throw fail("aborted");
  options.signal?.addEventListener("abort", forwardAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await (options.fetch ?? globalThis.fetch)(
      apiUrl(baseUrl, `/models${anthropic ? ANTHROPIC_PAGE : ""}`),
      {
        headers: { accept: "application/json", ...authHeaders(options), ...options.headers },
        signal: controller.signal,
        // The request carries the key: a redirect must not take it to another server.
        redirect: "manual",
      },
    );
    text = isRedirect(response) ? "" : await cappedText(response, MAX_MODELS_ANSWER_BYTES);
  } catch (error) {
    if (options.signal?.aborted) throw fail("aborted");
    if (error instanceof TooLargeError) throw fail(error.message);
    if (timedOut) throw fail(`timed out after ${timeoutMs} ms`);
    throw fail(transportReason(error, origin));
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", forwardAbort);
  }
  if (isRedirect(response)) {
    await response.body?.cancel();
    throw fail(redirectMessage(response, origin).replace(/^Model API at "[^"]*" /, ""));
  }
  if (!response.ok) {
    const detail = providerDetail(text, secrets) || response.statusText;
    throw fail(detail === "" ? `HTTP ${response.status}` : `HTTP ${response.status}: ${detail}`);
  }

  let parsed: unknown;
  try {
    // The list is shown and cached: a server that names a model after the key it was sent
    // must not put the key there.
    parsed = JSON.parse(withoutSecrets(text, secrets));
  } catch {
    throw fail("unexpected response (not JSON)");
  }
  const data = isRecord(parsed) ? parsed.data : undefined;
  if (!Array.isArray(data)) throw fail('unexpected response (no "data" list)');
  const entries = new Map<string, CatalogEntry>();
  for (const item of data) {
    if (entries.size >= MAX_DISCOVERED_MODELS) break;
    // Ids are shown in terminals and stored: no escapes, no whitespace, nothing huge.
    if (!isRecord(item) || typeof item.id !== "string" || !isListableModelId(item.id)) continue;
    if (!entries.has(item.id)) {
      entries.set(item.id, entryOf(options.provider, options.api, item.id, item));
    }
  }
  return [...entries.values()];
}

class TooLargeError extends Error {}

/** The body as text, refused once it passes `maxBytes` (a hostile server's endless answer). */
async function cappedText(response: Response, maxBytes: number): Promise<string> {
  const { text, cut } = await readCappedText(response.body, maxBytes);
  if (cut) throw new TooLargeError(`answer larger than ${maxBytes} bytes`);
  return text;
}

function authHeaders(options: DiscoveryOptions): Record<string, string> {
  if (options.api === "anthropic") {
    const headers: Record<string, string> = { "anthropic-version": ANTHROPIC_VERSION };
    if (options.apiKey) headers["x-api-key"] = options.apiKey;
    return headers;
  }
  return options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
}

/** The reason part of errors.ts's transport message (`connection refused`, …). */
function transportReason(error: unknown, origin: string): string {
  const message = transportErrorMessage(error, origin);
  const prefix = `at ${JSON.stringify(origin)}: `;
  const at = message.indexOf(prefix);
  return at === -1 ? message : message.slice(at + prefix.length);
}

/**
 * One `data[]` item as an entry: defaults, improved by the fields the server sent. Without a
 * context window from the server the entry is `guessedModel()`'s, marked guessed.
 */
function entryOf(
  provider: string,
  api: ApiStyle,
  id: string,
  item: Record<string, unknown>,
): CatalogEntry {
  // OpenRouter: context_length; vLLM: max_model_len.
  const window = positiveInteger(item.context_length) ?? positiveInteger(item.max_model_len);
  const entry: CatalogEntry = window === undefined
    ? { provider, ...guessedModel(id, api) }
    : { provider, ...unknownModel(id), source: "discovered", contextWindow: window };
  const top = isRecord(item.top_provider) ? item.top_provider : {};
  const output = positiveInteger(top.max_completion_tokens);
  entry.maxOutputTokens = Math.min(output ?? entry.maxOutputTokens, entry.contextWindow);
  const parameters = item.supported_parameters;
  if (Array.isArray(parameters)) {
    entry.tools = parameters.includes("tools");
    if (parameters.includes("reasoning")) entry.reasoning = "effort";
  }
  const architecture = isRecord(item.architecture) ? item.architecture : {};
  const modalities = architecture.input_modalities;
  if (Array.isArray(modalities) && modalities.includes("image")) entry.images = true;
  const price = isRecord(item.pricing) ? priceOf(item.pricing) : undefined;
  if (price !== undefined) entry.price = price;
  return entry;
}

/** OpenRouter's pricing (USD per token, as strings) per million tokens; undefined if unusable. */
function priceOf(pricing: Record<string, unknown>): ModelPrice | undefined {
  const input = perMillion(pricing.prompt);
  const output = perMillion(pricing.completion);
  // Negative prices (e.g. "-1" for routers) mean "varies": no price.
  if (input === undefined || output === undefined) return undefined;
  const price: ModelPrice = { input, output };
  const cachedInput = perMillion(pricing.input_cache_read);
  const cacheWrite = perMillion(pricing.input_cache_write);
  if (cachedInput !== undefined) price.cachedInput = cachedInput;
  if (cacheWrite !== undefined) price.cacheWrite = cacheWrite;
  return price;
}

/** A per-token price as USD per million tokens; undefined unless within 0 to the maximum. */
function perMillion(value: unknown): number | undefined {
  const perToken = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof perToken !== "number" || !(perToken >= 0)) return undefined;
  // Rounded to 1e-9 USD so "0.00000125" reads as 1.25, not 1.2499999999999998. Checked after
  // the arithmetic: a finite price per token can overflow per million.
  const price = Math.round(perToken * 1e15) / 1e9;
  return isTakenPrice(price) ? price : undefined;
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
