/**
 * The `tool_search` tool: finds deferred MCP tools (src/harness/deferred_tools.ts) by words or by
 * name and loads their schemas for the following requests. It reads tern's own list of tools
 * and changes nothing else: a read-only host tool, through the permission gate like every tool.
 */
import * as z from "../core/zod.ts";
import { defineTool, type Tool } from "../tools/define.ts";
import { type DeferredTools, loadedText, MAX_RESULTS, TOOL_SEARCH_NAME } from "./deferred_tools.ts";

const PARAMETERS = z.object({
  query: z.string().min(1).max(500).describe(
    'Words to look for in the tools\' names and descriptions, or "select:name1,name2" for ' +
      "tools by their exact names",
  ),
  max_results: z.number().int().min(1).max(MAX_RESULTS).optional().describe(
    `How many tools to load at most (default 5, at most ${MAX_RESULTS})`,
  ),
}).strict();

const INTRO = "Load MCP tools. Their schemas are not in your tool list yet: search this index " +
  "by words or select tools by name, and the tools found can be called from your next step " +
  "on (they stay loaded). Tools:\n";

/** `tool_search` over `deferred`; its description is the index of the deferred tools. */
export function createToolSearchTool(deferred: DeferredTools): Tool {
  const tool = defineTool({
    name: TOOL_SEARCH_NAME,
    description: INTRO,
    parameters: PARAMETERS,
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    // deno-lint-ignore require-await
    async execute({ query, max_results }) {
      const found = deferred.search(query, max_results ?? 5);
      if (found.length === 0) {
        return {
          output: `No MCP tool matches "${query}"; try other words, or select a tool the ` +
            'index in this tool\'s description lists with "select:name".',
        };
      }
      return { output: loadedText(found) };
    },
  });
  // The index is read at each request: it changes only when a server's tool list does.
  return {
    ...tool,
    get description() {
      return INTRO + deferred.index();
    },
  };
}
