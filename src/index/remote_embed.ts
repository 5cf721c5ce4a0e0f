/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint, for the code index when the
 * person configures one (the default embedding is local: embed.ts). Texts go in batches; each
 * vector is cached in the index by the hash of its model and text, so a chunk that did not
 * change is never sent again.
 */

import { shownUrl } from "../core/url_text.ts";
import { IndexError } from "./errors.ts";

/** Where to get embeddings: from the person's own config only (a repository cannot send code). */
export interface EmbeddingEndpoint {
  /** The API's base URL: requests go to `<baseUrl>/embeddings`. */
  baseUrl: string;
  model: string;
  /** The key (read from the variable the config names), sent as a bearer token. */
  apiKey?: string;
  /** Texts per request (default {@linkcode DEFAULT_EMBEDDING_BATCH}). */
  batchSize?: number;
  /** Longest a request may take, milliseconds (default 60 s). */
  timeoutMs?: number;
}

/** Texts per request unless configured. */
export const DEFAULT_EMBEDDING_BATCH = 64;

/** The most characters of one text sent (about 2,000 tokens). */
const TEXT_MAX = 8_000;

/** The most characters of an endpoint's own error message quoted in a failure. */
const REASON_MAX = 160;

/** Cached vectors by key, and a place to add new ones (the index's `embedding_cache`). */
export interface VectorCacheStore {
  cachedVectors(keys: string[]): Map<string, Float32Array>;
  cacheVectors(entries: [string, Float32Array][]): void;
}

/** The cache key of `text` embedded by `model`: sha-256 hex of both. */
export async function embeddingKey(model: string, text: string): Promise<string> {
  const bytes = new TextEncoder().encode(`${model}\n${text}`);
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The vectors of `texts` in order: cached ones from `cache`, the others fetched in batches and
 * then cached. Throws `Cannot compute embeddings at "<url>": <why>` (never with the key) when
 * the endpoint fails or answers something else than one vector of one length per text.
 */
export async function embedTexts(
  endpoint: EmbeddingEndpoint,
  texts: string[],
  cache?: VectorCacheStore,
): Promise<Float32Array[]> {
  const keys = await Promise.all(texts.map((text) => embeddingKey(endpoint.model, text)));
  const known = cache?.cachedVectors([...new Set(keys)]) ?? new Map<string, Float32Array>();
  const missing = [...new Set(keys.filter((key) => !known.has(key)))];
  const textOf = new Map(keys.map((key, index) => [key, texts[index]]));
  const size = Math.max(1, endpoint.batchSize ?? DEFAULT_EMBEDDING_BATCH);
  for (let start = 0; start < missing.length; start += size) {
    const batch = missing.slice(start, start + size);
    const vectors = await request(endpoint, batch.map((key) => textOf.get(key) ?? ""));
    const entries = batch.map((key, index) => [key, vectors[index]] as [string, Float32Array]);
    for (const [key, vector] of entries) known.set(key, vector);
    cache?.cacheVectors(entries);
  }
  return keys.map((key) => known.get(key)!);
}

async function request(endpoint: EmbeddingEndpoint, input: string[]): Promise<Float32Array[]> {
  const url = `${endpoint.baseUrl.replace(/\/+$/, "")}/embeddings`;
  const hide = hider(url, endpoint);
  const fail = (why: string): never => {
    throw new IndexError(`Cannot compute embeddings at "${shownUrl(url)}": ${hide(why)}`);
  };
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: endpoint.model,
        input: input.map((text) => text.slice(0, TEXT_MAX) || " "),
      }),
      signal: AbortSignal.timeout(endpoint.timeoutMs ?? 60_000),
    });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const body = await response.text();
  if (!response.ok) {
    const reason = reasonOf(body);
    return fail(`HTTP ${response.status}${reason === "" ? "" : `: ${reason}`}`);
  }
  let data: unknown;
  try {
    data = (JSON.parse(body) as { data?: unknown }).data;
  } catch {
    return fail("the answer is not JSON");
  }
  if (!Array.isArray(data) || data.length !== input.length) {
    return fail(
      `expected ${input.length} embeddings, got ${Array.isArray(data) ? data.length : 0}`,
    );
  }
  const out: Float32Array[] = new Array(input.length);
  for (const [position, item] of data.entries()) {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    const at = typeof index === "number" ? index : position;
    if (
      !Number.isInteger(at) || at < 0 || at >= input.length || out[at] !== undefined ||
      !Array.isArray(embedding) || embedding.length === 0 ||
      !embedding.every((value) => typeof value === "number" && Number.isFinite(value))
    ) {
      return fail(`embedding ${position} is not a list of numbers for a distinct input`);
    }
    out[at] = Float32Array.from(embedding as number[]);
  }
  if (out.some((vector) => vector.length !== out[0].length)) {
    return fail("the embeddings differ in length");
  }
  return out;
}

/**
 * A function that takes out of a text what could be a credential of `endpoint`: the URL (and the
 * base URL) as given become their {@linkcode shownUrl}, and the key, the URL's user name and
 * password and its query values become `***`. `fetch`'s own errors repeat the URL, and an
 * endpoint's answer may repeat the key.
 */
function hider(url: string, endpoint: EmbeddingEndpoint): (text: string) => string {
  const replacements: [string, string][] = [
    [url, shownUrl(url)],
    [endpoint.baseUrl, shownUrl(endpoint.baseUrl)],
  ];
  const secrets = new Set<string>();
  if (endpoint.apiKey) secrets.add(endpoint.apiKey);
  if (URL.canParse(url)) {
    const parsed = new URL(url);
    for (const part of [parsed.username, parsed.password]) {
      if (part !== "") {
        secrets.add(part);
        secrets.add(decoded(part));
      }
    }
    for (const value of parsed.searchParams.values()) if (value !== "") secrets.add(value);
  }
  const values = [...secrets].filter((value) => value.length >= 3).sort((a, b) =>
    b.length - a.length
  );
  return (text) => {
    let out = text;
    for (const [raw, shown] of replacements) out = out.split(raw).join(shown);
    for (const value of values) out = out.split(value).join("***");
    return out;
  };
}

/**
 * What an endpoint's failed answer says, short: the `error.message` (or `error`, or `message`)
 * of a JSON answer, one line, at most {@linkcode REASON_MAX} characters, and long runs of
 * key-like characters masked. Any other body is not quoted: it may echo the request or a key.
 */
function reasonOf(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "";
  }
  const record = (parsed ?? {}) as { error?: unknown; message?: unknown };
  const error = record.error as { message?: unknown } | string | undefined;
  const text = typeof error === "string"
    ? error
    : typeof error?.message === "string"
    ? error.message
    : typeof record.message === "string"
    ? record.message
    : "";
  // deno-lint-ignore no-control-regex
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  const masked = line.replace(/[A-Za-z0-9_\-+/=.]{24,}/g, (run) => /\d/.test(run) ? "***" : run);
  return masked.length > REASON_MAX ? `${masked.slice(0, REASON_MAX)}…` : masked;
}

/** `text` percent-decoded, or as it is when it is not valid percent-encoding. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
