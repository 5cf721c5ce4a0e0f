/**
 * The built-ins that run in tern's own process (`runsIn` other than `"worker"`): what a run
 * that never calls a file tool loads, without the file tools' libraries. The code index tools
 * load SQLite and tree-sitter only through `codeIndex`, at their first call.
 */
import { createBashTool } from "./bash.ts";
import type { CodeIndexAccess } from "./code_index_access.ts";
import { createCodeSearchTool } from "./code_search.ts";
import { createProcessListTool } from "./process_list.ts";
import { createProcessLogsTool } from "./process_logs.ts";
import { createProcessStopTool } from "./process_stop.ts";
import { createCodeSymbolsTool } from "./code_symbols.ts";
import type { Tool } from "./define.ts";
import { createWebFetchTool, type WebFetchOptions } from "./web_fetch.ts";
import { createGetSearchContentTool } from "./get_search_content.ts";
import { createWebSearchTool, type WebSearchOptions } from "./web_search.ts";

/** Options of {@linkcode createInProcessTools}. */
export interface InProcessToolOptions {
  /** Default timeout of a `bash` call in milliseconds; default 120,000. */
  bashTimeoutMs?: number;
  /** The workspace's code index, for code_search and code_symbols; without it they fail. */
  codeIndex?: () => CodeIndexAccess;
  /** Options of web_fetch (tests pass a transport with the guard relaxed for 127.0.0.1). */
  webFetch?: WebFetchOptions;
  /** web_search's providers, keys and cache, resolved from the person's config. */
  webSearch?: WebSearchOptions;
}

/** The built-ins that run in tern's process, in the order the model sees them. */
export function createInProcessTools(options: InProcessToolOptions = {}): Tool[] {
  return [
    createBashTool({ defaultTimeoutMs: options.bashTimeoutMs }),
    createProcessListTool(),
    createProcessLogsTool(),
    createProcessStopTool(),
    createCodeSearchTool(options.codeIndex),
    createCodeSymbolsTool(options.codeIndex),
    createWebFetchTool(options.webFetch),
    createWebSearchTool(options.webSearch),
    createGetSearchContentTool(options.webSearch),
  ];
}
