/**
 * The `code_symbols` tool: structure questions answered from the code index's relations —
 * where a name is defined, who calls it, what it calls, what extends or implements it, which
 * files import it.
 */
import * as z from "../core/zod.ts";
import type { CodeIndexAccess, SymbolAnswer } from "./code_index_access.ts";
import { codeIndexFor, fitBlocks, location, shownLine } from "./code_search.ts";
import { defineTool, type Tool, type ToolContext } from "./define.ts";
import { quotedName } from "./paths.ts";

/** Answers returned when `limit` is not given. */
export const DEFAULT_CODE_SYMBOLS_RESULTS = 30;
const MAX_CHARS = 8_000;

export const codeSymbolsParameters = z.strictObject({
  name: z.string().min(1).max(200).describe(
    'The symbol: a function, method, class or interface name ("parseArgs", "Store.open"), or ' +
      'for importers a module as imported ("./util.ts", "node:fs")',
  ),
  find: z.enum(["definitions", "callers", "callees", "implementations", "importers"]).optional()
    .describe(
      "definitions (where it is defined; the default), callers (who calls it), callees (what " +
        "its definitions call), implementations (what extends or implements it), importers " +
        "(which files import it)",
    ),
  limit: z.number().int().min(1).max(200).optional().describe(
    `Answers to return at most; default ${DEFAULT_CODE_SYMBOLS_RESULTS}`,
  ),
});

export type CodeSymbolsArgs = z.infer<typeof codeSymbolsParameters>;

const DESCRIPTION =
  `Answer structure questions from the workspace's code index: where a symbol is defined, who calls it, what it calls, what extends or implements it, which files import a module.
Calls are matched by name as written (obj.parse and this.parse count as calls of parse), so an answer may include a same-named symbol elsewhere.
Returns "path:start-end KIND symbol" lines. The index is refreshed first, like code_search.`;

const TITLES = {
  definitions: "Definitions of",
  callers: "Callers of",
  callees: "Calls made by",
  implementations: "Extends or implements",
  importers: "Files importing",
} as const;

/** Creates the `code_symbols` tool over `index` (see createCodeSearchTool()). */
export function createCodeSymbolsTool(index?: () => CodeIndexAccess): Tool {
  return defineTool({
    name: "code_symbols",
    description: DESCRIPTION,
    parameters: codeSymbolsParameters,
    readOnly: true,
    runsIn: "host",
    guidance: "For where a symbol is defined, who calls it, or what extends or implements it, " +
      "use `code_symbols` before grep.",
    paths: () => [],
    execute: async (args: CodeSymbolsArgs, ctx: ToolContext) => {
      const access = codeIndexFor(index, "code_symbols", ctx);
      const find = args.find ?? "definitions";
      const limit = args.limit ?? DEFAULT_CODE_SYMBOLS_RESULTS;
      const { results, notes } = await access.symbols(args.name, find, {
        limit,
        signal: ctx.signal,
      });
      const head = [
        ...notes.map((note) => `Note: ${note}`),
        results.length === 0
          ? `${TITLES[find]} "${args.name}": none in the index.`
          : `${TITLES[find]} "${args.name}" (${results.length}):`,
      ];
      return { output: fitBlocks(head, results.map((answer) => [answerLine(answer)]), MAX_CHARS) };
    },
  });
}

/** One answer as a line; its names, the repository's, quoted when they hold a line break. */
function answerLine({ chunk, relation, name }: SymbolAnswer): string {
  const how = relation === undefined ? "" : `  ${relation} ${quotedName(name ?? "")}`.trimEnd();
  const signature = shownLine(chunk.signature.split("\n")[0].trim().slice(0, 120));
  const shown = relation === undefined && signature !== "" ? `  ${signature}` : "";
  return `${location(chunk)}  ${chunk.kind} ${quotedName(chunk.symbol)}${how}${shown}`;
}
