/**
 * The `code_search` tool: the workspace's code index asked in words or identifiers, answered
 * with compact ranked chunks (path:lines, kind, symbol, score, a few lines) within a character
 * budget. The index is brought up to date before the search (see CodeIndexAccess).
 */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import type { Chunk } from "../index/types.ts";
import type { CodeIndexAccess } from "./code_index_access.ts";
import { defineTool, type Tool, type ToolContext } from "./define.ts";
import { quotedName } from "./paths.ts";

/** Results returned when `limit` is not given. */
export const DEFAULT_CODE_SEARCH_RESULTS = 8;
/** Characters of output when `max_chars` is not given (about 1,500 tokens). */
export const DEFAULT_CODE_SEARCH_CHARS = 6_000;
/** Lines of a chunk shown under its header, at most. */
const SNIPPET_LINES = 6;
/** A shown line longer than this is cut. */
const LINE_CHARS = 160;

export const codeSearchParameters = z.strictObject({
  query: z.string().min(1).max(500).describe(
    'What to find, in words or identifiers, e.g. "where is the session file locked" or ' +
      '"parseArgs"',
  ),
  limit: z.number().int().min(1).max(30).optional().describe(
    `Results to return at most; default ${DEFAULT_CODE_SEARCH_RESULTS}`,
  ),
  max_chars: z.number().int().min(500).max(20_000).optional().describe(
    `Length of the answer in characters at most; default ${DEFAULT_CODE_SEARCH_CHARS}`,
  ),
});

export type CodeSearchArgs = z.infer<typeof codeSearchParameters>;

const DESCRIPTION =
  `Search the workspace's code index by meaning and by name: words ("where are sessions locked") or identifiers (parseArgs, parse_args).
Returns ranked chunks (functions, methods, classes, or windows of other files) as "path:start-end KIND symbol score" with their first lines.
The index skips .git, files ignored by .gitignore, binary and large files; it is refreshed before each search. Use grep for exact text or regular expressions.`;

/**
 * Creates the `code_search` tool over `index`; without one (in the tool worker, or where no
 * index is composed) every call fails with EXECUTION_FAILED.
 */
export function createCodeSearchTool(index?: () => CodeIndexAccess): Tool {
  return defineTool({
    name: "code_search",
    description: DESCRIPTION,
    parameters: codeSearchParameters,
    readOnly: true,
    runsIn: "host",
    guidance: "To find code by what it does or by an approximate name, start with `code_search`; " +
      "use grep for exact text or a regular expression.",
    // It names no path: it reads the workspace's indexable files, like `tern index`.
    paths: () => [],
    execute: async (args: CodeSearchArgs, ctx: ToolContext) => {
      const access = codeIndexFor(index, "code_search", ctx);
      const limit = args.limit ?? DEFAULT_CODE_SEARCH_RESULTS;
      const { results, notes } = await access.search(args.query, { limit, signal: ctx.signal });
      const budget = args.max_chars ?? DEFAULT_CODE_SEARCH_CHARS;
      return { output: formatHits(args.query, results, notes, budget) };
    },
  });
}

/**
 * The index for one call: refused unless the call may read the whole workspace (a custom
 * profile may grant less, and the index reads every indexable file).
 */
export function codeIndexFor(
  index: (() => CodeIndexAccess) | undefined,
  tool: string,
  ctx: ToolContext,
): CodeIndexAccess {
  if (index === undefined) {
    throw new ToolError("EXECUTION_FAILED", `Cannot run "${tool}": no code index here`);
  }
  const read = ctx.roots?.read;
  if (read !== undefined && !read.some((root) => covers(root, ctx.workspace))) {
    throw new ToolError(
      "POLICY_DENIED",
      `Cannot run "${tool}": the sandbox profile does not let tools read the whole workspace`,
    );
  }
  return index();
}

function covers(root: string, path: string): boolean {
  return root === "/" || path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** The hits as compact text, best first, cut to `budget` characters with a note of what was left. */
export function formatHits(
  query: string,
  hits: { chunk: Chunk; score: number }[],
  notes: string[],
  budget: number,
): string {
  const head = [
    ...notes.map((note) => `Note: ${note}`),
    hits.length === 0
      ? `No indexed code matches "${query}".`
      : `${hits.length} result(s) for "${query}", best first:`,
  ];
  return fitBlocks(head, hits.map(({ chunk, score }) => hitBlock(chunk, score)), budget);
}

/** `head` plus as many whole `blocks` as fit in `budget` characters, then what was left out. */
export function fitBlocks(head: string[], blocks: string[][], budget: number): string {
  const lines = [...head];
  let used = lines.join("\n").length;
  let shown = 0;
  for (const block of blocks) {
    let size = block.join("\n").length + 1;
    let take = block;
    if (used + size > budget) {
      // The header line alone still says where to look.
      take = block.slice(0, 1);
      size = take[0].length + 1;
      if (used + size > budget) break;
    }
    lines.push(...take);
    used += size;
    shown++;
  }
  if (shown < blocks.length) {
    lines.push(`[${blocks.length - shown} more result(s) left out: the answer's length limit]`);
  }
  return lines.join("\n");
}

function hitBlock(chunk: Chunk, score: number): string[] {
  const lines = [
    `${location(chunk)}  ${chunk.kind} ${quotedName(chunk.symbol)}  score ${score.toFixed(2)}`,
  ];
  const doc = chunk.doc.split("\n").map((line) => line.trim()).find((line) => line !== "");
  if (doc !== undefined) lines.push(`  // ${shownLine(doc)}`);
  const text = chunk.text.split("\n");
  for (let i = 0; i < Math.min(SNIPPET_LINES, text.length); i++) {
    if (text[i].trim() === "" && i > 0) continue;
    lines.push(`  ${chunk.startLine + i}│ ${shownLine(text[i].trimEnd())}`);
  }
  if (text.length > SNIPPET_LINES) lines.push("  …");
  return lines;
}

/**
 * `path:start-end`, or `path:line` for one line; a path with a line break or another control
 * character quoted (quotedName()), as the file tools show it.
 */
export function location(chunk: Chunk): string {
  const path = quotedName(chunk.path);
  return chunk.startLine === chunk.endLine
    ? `${path}:${chunk.startLine}`
    : `${path}:${chunk.startLine}-${chunk.endLine}`;
}

/**
 * A line of a file's text as shown under a result: cut to {@link LINE_CHARS}, the characters
 * that break lines other than `\n` (by which it was split) turned into spaces, so the line never
 * shows as two.
 */
export function shownLine(line: string): string {
  const one = line.replace(LINE_BREAKS, " ");
  return one.length > LINE_CHARS ? `${one.slice(0, LINE_CHARS)}…` : one;
}

const LINE_BREAKS = /[\r\v\f\u0085\u2028\u2029]/g;
