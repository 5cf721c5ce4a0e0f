/**
 * The discovered-model cache: what each provider's `GET /models` answered, kept in tern's home
 * (`<ternHome>/cache/models.json`, never the workspace) so `tern models` and `/model` completion
 * work offline. One record per provider and base URL, with the time it was listed. What is read
 * back is checked entry by entry (the file, like the answer it came from, is untrusted): a bad
 * entry is dropped, a bad file reads as empty.
 */
import { join } from "../core/path.ts";
import { shownUrl } from "../core/url_text.ts";
import { type CatalogEntry, isListableModelId, isTakenPrice } from "./model_info.ts";

/** How long a listing is fresh: within it, `tern models` does not ask the server again. */
export const MODELS_CACHE_TTL_MS = 24 * 60 * 60 * 1000;
/** Most models kept per provider (the same cap as discovery's). */
export const MAX_CACHED_MODELS = 2_000;
/** A cache file larger than this is not read (a few thousand entries fit many times over). */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Most listings kept (provider and URL pairs). */
const MAX_LISTINGS = 64;
const VERSION = 1;

/** One provider's cached listing. */
export interface CachedListing {
  provider: string;
  /**
   * The API root it was listed at, without a trailing `/` and with its credentials hidden
   * (`shownUrl`: a password or query key is never written here).
   */
  baseUrl: string;
  /** When the server answered, in ms since the epoch. */
  listedAt: number;
  models: CatalogEntry[];
}

interface CacheFile {
  version: number;
  listings: CachedListing[];
}

/** The cache file's path under tern's home. */
export function modelsCachePath(ternHome: string): string {
  return join(ternHome, "cache", "models.json");
}

/** The URL a listing is kept under: no trailing `/`, and never its credentials. */
function trimmed(baseUrl: string): string {
  return shownUrl(baseUrl.replace(/\/+$/, ""));
}

/** True when `listing` was listed less than `ttlMs` before `now`. */
export function isFresh(listing: CachedListing, now = Date.now(), ttlMs = MODELS_CACHE_TTL_MS) {
  return now - listing.listedAt < ttlMs && listing.listedAt <= now;
}

/** The cached listing of `provider` at `baseUrl`, or undefined when there is none (or no file). */
export async function readCachedModels(
  ternHome: string,
  provider: string,
  baseUrl: string,
): Promise<CachedListing | undefined> {
  const file = await readCacheFile(ternHome);
  const url = trimmed(baseUrl);
  return file.listings.find((l) => l.provider === provider && l.baseUrl === url);
}

/** Every cached listing, by provider name (a provider listed at several URLs: the newest). */
export async function readAllCachedModels(ternHome: string): Promise<Map<string, CachedListing>> {
  const file = await readCacheFile(ternHome);
  const byProvider = new Map<string, CachedListing>();
  for (const listing of file.listings) {
    const known = byProvider.get(listing.provider);
    if (known === undefined || known.listedAt < listing.listedAt) {
      byProvider.set(listing.provider, listing);
    }
  }
  return byProvider;
}

/**
 * Stores a listing (replacing the provider's earlier one at that URL), writing the file
 * atomically (a temporary file renamed over it) with owner-only permissions.
 * @throws {Error} `Cannot write the models cache "<path>": <reason>`.
 */
export async function writeCachedModels(
  ternHome: string,
  provider: string,
  baseUrl: string,
  models: readonly CatalogEntry[],
  listedAt = Date.now(),
): Promise<void> {
  const path = modelsCachePath(ternHome);
  const file = await readCacheFile(ternHome);
  const url = trimmed(baseUrl);
  file.listings = file.listings.filter((l) => l.provider !== provider || l.baseUrl !== url);
  file.listings.push({
    provider,
    baseUrl: url,
    listedAt,
    models: models.slice(0, MAX_CACHED_MODELS).map((model) => ({ ...model })),
  });
  // A hostile or runaway config cannot grow the file without bound: the newest listings stay.
  file.listings = file.listings.slice(-MAX_LISTINGS);
  const temporary = `${path}.${Deno.pid}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.mkdir(join(ternHome, "cache"), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(temporary, JSON.stringify(file), { mode: 0o600, createNew: true });
    await Deno.rename(temporary, path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Cannot write the models cache ${JSON.stringify(path)}: ${reason}`);
  }
}

async function readCacheFile(ternHome: string): Promise<CacheFile> {
  const empty: CacheFile = { version: VERSION, listings: [] };
  const path = modelsCachePath(ternHome);
  let text: string;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size > MAX_FILE_BYTES) return empty;
    text = await Deno.readTextFile(path);
  } catch {
    return empty;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return empty;
  }
  if (!isRecord(parsed) || parsed.version !== VERSION || !Array.isArray(parsed.listings)) {
    return empty;
  }
  for (const raw of parsed.listings.slice(-MAX_LISTINGS)) {
    if (!isRecord(raw) || typeof raw.listedAt !== "number" || !Array.isArray(raw.models)) continue;
    const { provider, baseUrl } = raw;
    if (typeof provider !== "string" || typeof baseUrl !== "string") continue;
    const models = raw.models.slice(0, MAX_CACHED_MODELS).flatMap((m) => checkedEntry(m, provider));
    // A file written before credentials were kept out loses them at the next write.
    empty.listings.push({ provider, baseUrl: trimmed(baseUrl), listedAt: raw.listedAt, models });
  }
  return empty;
}

/** A cached entry as a CatalogEntry of `provider`, or nothing when any field is off. */
function checkedEntry(raw: unknown, provider: string): CatalogEntry[] {
  if (!isRecord(raw) || raw.provider !== provider) return [];
  const { id, contextWindow, maxOutputTokens, images, tools, reasoning, price } = raw;
  if (typeof id !== "string" || !isListableModelId(id)) return [];
  if (!positive(contextWindow) || !positive(maxOutputTokens)) return [];
  if (typeof images !== "boolean" || typeof tools !== "boolean") return [];
  const entry: CatalogEntry = {
    provider,
    id,
    contextWindow,
    maxOutputTokens,
    images,
    tools,
    source: "discovered",
  };
  if (reasoning === "effort" || reasoning === "budget") entry.reasoning = reasoning;
  if (raw.guessed === true) entry.guessed = true;
  // A price is taken from the cache as from a server: within the cap (a cache an older tern
  // wrote may hold a larger one).
  if (isRecord(price) && isTakenPrice(price.input) && isTakenPrice(price.output)) {
    entry.price = { input: price.input, output: price.output };
    if (isTakenPrice(price.cachedInput)) entry.price.cachedInput = price.cachedInput;
    if (isTakenPrice(price.cacheWrite)) entry.price.cacheWrite = price.cacheWrite;
  }
  return [entry];
}

function positive(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
