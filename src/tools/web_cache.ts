/**
 * The web search cache: one JSON line per search response, newest last, in a file of tern's
 * home (never the repository's, which could plant entries), bounded in size: the oldest
 * responses go first. get_search_content reads it back.
 */
import type { SearchResult } from "./web_search_providers.ts";

/** One cached search response. */
export interface CachedSearch {
  id: string;
  time: string;
  provider: string;
  query: string;
  results: SearchResult[];
}

/** Default size bound of the cache file. */
export const DEFAULT_CACHE_BYTES = 2 * 1024 * 1024;

/**
 * The responses in the cache file, oldest first; none when it does not exist. Lines that are
 * not a response are skipped; a file that is not a regular file or is far over the bound is
 * not read.
 */
export async function readSearchCache(
  path: string,
  maxBytes = DEFAULT_CACHE_BYTES,
): Promise<CachedSearch[]> {
  let text: string;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size > maxBytes * 2) return [];
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const entries: CachedSearch[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line);
      if (isCachedSearch(entry)) entries.push(entry);
    } catch {
      // A torn or foreign line is skipped.
    }
  }
  return entries;
}

/**
 * Appends `entry`, dropping the oldest responses until the file is within `maxBytes`; written
 * whole to a temporary file and renamed over the old one (0600).
 */
export async function appendSearchCache(
  path: string,
  entry: CachedSearch,
  maxBytes = DEFAULT_CACHE_BYTES,
): Promise<void> {
  const lines = [...await readSearchCache(path, maxBytes), entry].map((e) => JSON.stringify(e));
  let size = lines.reduce((sum, line) => sum + new TextEncoder().encode(line).length + 1, 0);
  while (lines.length > 1 && size > maxBytes) {
    size -= new TextEncoder().encode(lines.shift()!).length + 1;
  }
  const folder = path.slice(0, path.lastIndexOf("/"));
  await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temp, lines.join("\n") + "\n", { mode: 0o600, createNew: true });
  await Deno.rename(temp, path);
}

function isCachedSearch(value: unknown): value is CachedSearch {
  if (typeof value !== "object" || value === null) return false;
  const entry = value as Record<string, unknown>;
  return typeof entry.id === "string" && typeof entry.query === "string" &&
    typeof entry.provider === "string" && Array.isArray(entry.results) &&
    entry.results.every((r) =>
      typeof r === "object" && r !== null && typeof r.url === "string" &&
      typeof r.title === "string" && typeof r.snippet === "string"
    );
}
