/**
 * Files of tern's source tree that run on their own (the tool worker's entry, the network proxy)
 * or configure it (deno.json), named the same way whether this code runs from `src/` or from
 * the bundle `bin/build` writes to `.tools/bundle/`. Both folders sit two levels below the
 * repository root, so the root is `../../` from either; nothing else may depend on where a module
 * lies, since the bundle moves every module into a flat folder of chunks.
 */

const ROOT = new URL("../../", import.meta.url);

/** The URL of `path` (relative to the repository root, e.g. `"src/tools/worker_handler.ts"`). */
export function sourceUrl(path: string): URL {
  if (path.startsWith("/") || path.split("/").includes("..")) {
    throw new TypeError(`Cannot name the source file "${path}": expected a path inside the tree`);
  }
  return new URL(path, ROOT);
}
