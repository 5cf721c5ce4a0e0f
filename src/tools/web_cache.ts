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
    if (!ownFile(info) || info.size > maxBytes * 2) return [];
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

/** The append under way for each cache file, which the next one waits for. */
const appending = new Map<string, Promise<void>>();

/**
 * Appends `entry` as one line (0600), then, when the file has passed `maxBytes`, drops the
 * oldest responses until it is within it, rewriting it whole to a temporary file renamed over
 * the old one. An entry larger than `maxBytes` alone is refused (a `RangeError`), the file left
 * as it was. The line is added with a single append, so responses of searches that end
 * together, here or in another tern in this workspace (subagents), are all kept; appends in
 * this process run one at a time. Only a trim racing another process's append can drop it.
 */
export function appendSearchCache(
  path: string,
  entry: CachedSearch,
  maxBytes = DEFAULT_CACHE_BYTES,
): Promise<void> {
  const previous = appending.get(path) ?? Promise.resolve();
  const done = previous.then(() => append(path, entry, maxBytes));
  const settled = done.catch(() => {});
  appending.set(path, settled);
  settled.then(() => {
    if (appending.get(path) === settled) appending.delete(path);
  });
  return done;
}

async function append(path: string, entry: CachedSearch, maxBytes: number): Promise<void> {
  // A response past the bound on its own is not written: it would push out every other one,
  // and a file far over the bound is not read back.
  const line = new TextEncoder().encode(`${JSON.stringify(entry)}\n`);
  if (line.length > maxBytes) {
    throw new RangeError(
      `the response takes ${line.length} bytes, more than the cache's ${maxBytes}`,
    );
  }
  const folder = path.slice(0, path.lastIndexOf("/"));
  await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
  if ((await Deno.lstat(folder)).isSymlink) {
    throw new Error(
      `the cache's folder "${folder}" is a link, not a folder of its own; remove it and search ` +
        "again",
    );
  }
  await appendOwn(path, line);
  if ((await Deno.lstat(path)).size <= maxBytes) return;
  // Read whatever its size: appends of several processes may have taken it far past the bound.
  const kept = await readSearchCache(path, Number.POSITIVE_INFINITY);
  const lines = kept.map((e) => JSON.stringify(e));
  let size = lines.reduce((sum, text) => sum + new TextEncoder().encode(text).length + 1, 0);
  while (size > maxBytes) {
    size -= new TextEncoder().encode(lines.shift()!).length + 1;
  }
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temp, lines.join("\n") + "\n", { mode: 0o600, createNew: true });
  await Deno.rename(temp, path);
}

/** A regular file of its own: not a link, and no other name for it (a hard link). */
function ownFile(info: Deno.FileInfo): boolean {
  return info.isFile && (info.nlink ?? 1) <= 1;
}

/**
 * Appends `line` to the file at `path` (made 0600 when missing), never through a link or into a
 * file with another name: a link planted there would have had every search's query (the
 * model's words) appended to whatever it names, a shell's start-up file among them. The file is
 * checked again once open, so a link swapped in meanwhile is found too.
 * @throws {Error} when `path` is a link, a hard link or not a regular file.
 */
async function appendOwn(path: string, line: Uint8Array): Promise<void> {
  const refuse = () =>
    new Error(
      `the cache file "${path}" is a link or has another name (a hard link), not a file of its ` +
        "own; remove it and search again",
    );
  try {
    if (!ownFile(await Deno.lstat(path))) throw refuse();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const file = await Deno.open(path, { append: true, create: true, mode: 0o600 });
  try {
    const opened = await file.stat();
    const there = await Deno.lstat(path);
    if (
      !ownFile(there) || !ownFile(opened) || there.ino !== opened.ino || there.dev !== opened.dev
    ) {
      throw refuse();
    }
    for (let at = 0; at < line.length;) at += await file.write(line.subarray(at));
  } finally {
    file.close();
  }
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
