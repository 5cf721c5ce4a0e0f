/**
 * get_search_content: web_search's responses read back from the cache, without a new search.
 * The definition only; the body (`web_search_run.ts`) loads at the first call.
 */
import * as z from "../core/zod.ts";
import { defineTool, type Tool } from "./define.ts";
import type { WebSearchOptions } from "./web_search_run.ts";

export const getSearchContentSchema = z.strictObject({
  responseId: z.string().min(1).max(100).optional().describe(
    "The response id a web_search printed: all its results",
  ),
  url: z.string().min(1).max(4096).optional().describe("A result's URL: the latest result for it"),
  urlIndex: z.number().int().min(1).max(100).optional().describe(
    "A result's number (1-based) in the response named by responseId, else in the latest one",
  ),
  query: z.string().min(1).max(400).optional().describe(
    "A query searched before: its latest response",
  ),
  queryIndex: z.number().int().min(1).max(10_000).optional().describe(
    "A search's number (1-based, oldest first) in the cache",
  ),
}).describe("Read back cached web search results");

export function createGetSearchContentTool(options: WebSearchOptions = {}): Tool {
  return defineTool({
    name: "get_search_content",
    description: "Read back web_search results from the cache, without a new search: by " +
      "responseId (a whole response), url, urlIndex (with responseId, else the latest " +
      "response), query (its latest response) or queryIndex.",
    parameters: getSearchContentSchema,
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    async execute(args) {
      const { readCachedForModel } = await import("./web_search_run.ts");
      return await readCachedForModel(args, options);
    },
  });
}
