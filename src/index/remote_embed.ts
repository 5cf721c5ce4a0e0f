/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint, for the code index when the
 * person configures one (the default embedding is local: embed.ts). Texts go in batches; each
 * vector is cached in the index by the hash of its model and text, so a chunk that did not
 * change is never sent again.
 */

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
  const fail = (why: string): never => {
    throw new IndexError(`Cannot compute embeddings at "${url}": ${why}`);
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
  if (!response.ok) return fail(`HTTP ${response.status}: ${body.slice(0, 200)}`);
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
