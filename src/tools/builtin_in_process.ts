/**
 * The built-ins that run in tern's own process (`runsIn` other than `"worker"`): what a run
 * that never calls a file tool loads, without the file tools' libraries.
 */
import { createBashTool } from "./bash.ts";
import type { Tool } from "./define.ts";
import { createWebFetchTool, type WebFetchOptions } from "./web_fetch.ts";
import { createGetSearchContentTool } from "./get_search_content.ts";
import { createWebSearchTool, type WebSearchOptions } from "./web_search.ts";

/** The built-ins that run in tern's process, in the order the model sees them. */
export function createInProcessTools(
  options: { bashTimeoutMs?: number; webFetch?: WebFetchOptions; webSearch?: WebSearchOptions } =
    {},
): Tool[] {
  return [
    createBashTool({ defaultTimeoutMs: options.bashTimeoutMs }),
    createWebFetchTool(options.webFetch),
    createWebSearchTool(options.webSearch),
    createGetSearchContentTool(options.webSearch),
  ];
}
