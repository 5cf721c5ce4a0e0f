/** The built-in tools, built eagerly from their definitions (zod schemas and all). */
import { createInProcessTools, type InProcessToolOptions } from "./builtin_in_process.ts";
import type { Tool } from "./define.ts";
import { createEditTool } from "./edit.ts";
import { createGlobTool } from "./glob.ts";
import { createGrepTool } from "./grep.ts";
import { createListTool } from "./list.ts";
import { createMultiEditTool } from "./multi_edit.ts";
import { createReadTool } from "./read.ts";
import { createWriteTool } from "./write.ts";

export { createBashTool } from "./bash.ts";
export { createEditTool } from "./edit.ts";
export { createGlobTool } from "./glob.ts";
export { createGrepTool } from "./grep.ts";
export { createListTool } from "./list.ts";
export { createMultiEditTool } from "./multi_edit.ts";
export { createReadTool } from "./read.ts";
export { createWriteTool } from "./write.ts";
export { defineTool, type Tool, type ToolContext } from "./define.ts";

/** Options for {@linkcode createBuiltinTools}. */
export interface BuiltinToolOptions extends InProcessToolOptions {
  /** Passed to {@linkcode createGrepTool}: `false` forces the JavaScript search. */
  ripgrep?: boolean | string;
  /**
   * Let write and edit change files in `.git` (any depth) and `.tern`; default false, so hooks,
   * git config and tern's own config are protected from the model.
   */
  allowProtectedWrites?: boolean;
}

/**
 * The built-in tools in the order the model sees them: read, write, edit, multi_edit, list,
 * glob, grep, bash, code_search, code_symbols, web_fetch, web_search, get_search_content.
 */
export function createBuiltinTools(options: BuiltinToolOptions = {}): Tool[] {
  return [
    createReadTool(),
    createWriteTool({ allowProtectedWrites: options.allowProtectedWrites }),
    createEditTool({ allowProtectedWrites: options.allowProtectedWrites }),
    createMultiEditTool({ allowProtectedWrites: options.allowProtectedWrites }),
    createListTool(),
    createGlobTool(),
    createGrepTool({ ripgrep: options.ripgrep }),
    ...createInProcessTools(options),
  ];
}
