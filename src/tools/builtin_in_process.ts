/**
 * The built-ins that run in tern's own process (`runsIn` other than `"worker"`): what a run
 * that never calls a file tool loads, without the file tools' libraries. The code index tools
 * load SQLite and tree-sitter only through `codeIndex`, at their first call.
 */
import { createBashTool } from "./bash.ts";
import type { CodeIndexAccess } from "./code_index_access.ts";
import { createCodeSearchTool } from "./code_search.ts";
import { createCodeSymbolsTool } from "./code_symbols.ts";
import type { Tool } from "./define.ts";

/** Options of {@linkcode createInProcessTools}. */
export interface InProcessToolOptions {
  /** Default timeout of a `bash` call in milliseconds; default 120,000. */
  bashTimeoutMs?: number;
  /** The workspace's code index, for code_search and code_symbols; without it they fail. */
  codeIndex?: () => CodeIndexAccess;
}

/** The built-ins that run in tern's process, in the order the model sees them. */
export function createInProcessTools(options: InProcessToolOptions = {}): Tool[] {
  return [
    createBashTool({ defaultTimeoutMs: options.bashTimeoutMs }),
    createCodeSearchTool(options.codeIndex),
    createCodeSymbolsTool(options.codeIndex),
  ];
}
