/** The `grep` tool: a regex search over file contents, with ripgrep or a JavaScript fallback. */
import { join } from "../core/path.ts";
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { BINARY_SNIFF_BYTES, looksBinary } from "./file_io.ts";
import { searchWithFallback } from "./grep_fallback.ts";
import { formatGrep, type GrepCollector, type GrepQuery } from "./grep_results.ts";
import { searchWithRipgrep } from "./grep_ripgrep.ts";
import { type CheckedPath, checkPath, displayPath } from "./paths.ts";
import { openVerified } from "./verified_io.ts";

/** Matching lines returned when `max_results` is not given. */
export const DEFAULT_GREP_RESULTS = 200;

export const grepParameters = z.strictObject({
  pattern: z.string().min(1).describe(
    'Regular expression to search for (ripgrep syntax), e.g. "function\\s+load\\w*"',
  ),
  path: z.string().min(1).optional().describe(
    "File or folder to search, relative to the workspace root; default the root",
  ),
  glob: z.string().min(1).optional().describe(
    'Only search files matching this glob: "*.ts" matches in any folder, "src/**/*.ts" is ' +
      'relative to the workspace root, a leading "!" excludes',
  ),
  ignore_case: z.boolean().optional().describe("Match without regard to case; default false"),
  context: z.number().int().min(0).max(10).optional().describe(
    "Lines to show before and after each match; default 0",
  ),
  max_results: z.number().int().min(1).max(2000).optional().describe(
    `Matching lines to return at most; default ${DEFAULT_GREP_RESULTS}`,
  ),
});

export type GrepArgs = z.infer<typeof grepParameters>;

/** Options for {@linkcode createGrepTool}. */
export interface GrepToolOptions {
  /**
   * `false` always uses the JavaScript engine; a string names the ripgrep binary. Default
   * `"rg"` from PATH, falling back to JavaScript when it cannot be started.
   */
  ripgrep?: boolean | string;
}

const DESCRIPTION =
  `Search file contents with a regular expression. Paths are relative to the workspace root.
Prints matching lines as "path:line:text" (context lines as "path-line-text", groups split by "--"), files sorted by path.
Skips .git, files ignored by .gitignore and binary files. At most ${DEFAULT_GREP_RESULTS} matching lines unless max_results is set.`;

/** Creates the `grep` tool. */
export function createGrepTool(options: GrepToolOptions = {}): Tool {
  let rgPath: string | null = options.ripgrep === false
    ? null
    : typeof options.ripgrep === "string"
    ? options.ripgrep
    : "rg";
  return defineTool({
    name: "grep",
    description: DESCRIPTION,
    parameters: grepParameters,
    readOnly: true,
    subagentBase: true,
    runsIn: "worker",
    paths: (args) => [{ path: args.path ?? ".", write: false }],
    async execute(args, ctx) {
      const pathArg = args.path ?? ".";
      const checked = await checkPath(ctx.workspace, pathArg, { roots: ctx.roots });
      const { real: target, root, info } = checked;
      if (info === null) throw new ToolError("NOT_FOUND", `Cannot search "${pathArg}": not found`);
      if (info.isFile && looksBinary(head(checked))) {
        return { output: `No matches: "${pathArg}" is a binary file` };
      }
      const query: GrepQuery = {
        pattern: args.pattern,
        ignoreCase: args.ignore_case ?? false,
        context: args.context ?? 0,
        maxResults: args.max_results ?? DEFAULT_GREP_RESULTS,
        glob: args.glob,
        workspace: root,
        target,
        targetIsFile: info.isFile,
        signal: ctx.signal,
      };
      let found: GrepCollector | null = null;
      if (rgPath !== null) {
        found = await searchWithRipgrep(rgPath, query);
        // Not startable (missing or not permitted): use JavaScript from now on.
        if (found === null) rgPath = null;
      }
      const engine = found === null ? "javascript" : "ripgrep";
      found ??= await searchWithFallback(query);
      // Matches in a granted root outside the workspace are shown with absolute paths.
      const label = (path: string) => displayPath(ctx.workspace, join(root, path));
      const long = [...found.longLines];
      const longNote = long.length === 0
        ? ""
        : `\n\n(lines over 1 MiB long are left out, in ${
          long.slice(0, 5).map((path) => JSON.stringify(label(path))).join(", ")
        }${long.length > 5 ? ` and ${long.length - 5} more files` : ""})`;
      if (found.lines.length === 0) {
        return {
          output: `No matches for "${args.pattern}" in "${pathArg}"${longNote}`,
          details: { kind: "matches", count: 0, truncated: long.length > 0, engine },
        };
      }
      const note = found.more
        ? `\n\n(showing the first ${found.matches} matching lines; there are more: ` +
          "narrow the pattern, path or glob, or raise max_results)"
        : "";
      return {
        output: formatGrep(found, query.context, label) + note + longNote,
        details: { kind: "matches", count: found.matches, truncated: found.more, engine },
      };
    },
  });
}

function head(checked: CheckedPath): Uint8Array {
  using file = openVerified(checked);
  return file.head(BINARY_SNIFF_BYTES);
}
