/** The `glob` tool: file paths matching a pattern, without ignored files. */
import * as nodeFs from "node:fs";
import { join, resolve } from "../core/path.ts";
import { glob } from "tinyglobby";
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { IgnoreRules, rulesFor } from "./ignore_rules.ts";
import { costlyGlob, MAX_GLOBSTARS, MAX_PART_WILDCARDS } from "../core/glob_cost.ts";
import { checkPath, displayPath, isInside } from "./paths.ts";

/** Paths shown at most; the rest are counted in a note. */
export const MAX_GLOB_RESULTS = 1000;

export const globParameters = z.strictObject({
  pattern: z.string().min(1).describe(
    'Glob pattern relative to path, e.g. "**/*.ts" or "src/**/*_test.{ts,tsx}"',
  ),
  path: z.string().min(1).optional().describe(
    "Folder to search in, relative to the workspace root; default the root",
  ),
});

export type GlobArgs = z.infer<typeof globParameters>;

const DESCRIPTION =
  `Find files by glob pattern (*, **, ?, {a,b}, [abc]). Paths are relative to the workspace root.
Returns matching file paths relative to the workspace root, sorted by path, at most ${MAX_GLOB_RESULTS}.
Skips .git and files ignored by .gitignore; symlinked folders are not followed. Use grep to search file contents.`;

/** Creates the `glob` tool. */
export function createGlobTool(): Tool {
  return defineTool({
    name: "glob",
    description: DESCRIPTION,
    parameters: globParameters,
    readOnly: true,
    subagentBase: true,
    runsIn: "worker",
    paths: (args) => [{ path: args.path ?? ".", write: false }],
    async execute(args, ctx) {
      if (args.pattern.startsWith("/") || args.pattern.split("/").includes("..")) {
        throw new ToolError(
          "POLICY_DENIED",
          `Pattern "${args.pattern}" must stay inside the search folder; use path to choose the folder`,
        );
      }
      refuseCostly(args.pattern);
      const dirArg = args.path ?? ".";
      const { real: dir, root, info } = await checkPath(ctx.workspace, dirArg, {
        roots: ctx.roots,
      });
      if (info === null) throw new ToolError("NOT_FOUND", `Cannot search "${dirArg}": not found`);
      if (!info.isDirectory) {
        throw new ToolError("EXECUTION_FAILED", `Cannot search "${dirArg}": it is not a directory`);
      }
      const rules = await rulesFor(dir, new IgnoreRules(root));
      const found = await glob(args.pattern, {
        cwd: dir,
        absolute: true,
        dot: true,
        onlyFiles: true,
        followSymbolicLinks: false,
        expandDirectories: false,
        signal: ctx.signal,
        fs: { readdir: filteredReaddir(rules, dir) },
      });
      const paths = found
        .filter((path) => isInside(root, path))
        .map((path) => displayPath(ctx.workspace, path))
        .sort((a, b) => a < b ? -1 : a > b ? 1 : 0);
      if (paths.length === 0) {
        return {
          output: `No files match "${args.pattern}" in "${dirArg}"`,
          details: { kind: "matches", count: 0, truncated: false },
        };
      }
      const shown = paths.slice(0, MAX_GLOB_RESULTS);
      const truncated = paths.length > shown.length;
      if (truncated) {
        shown.push(
          `(showing the first ${MAX_GLOB_RESULTS} of ${paths.length} files; use a narrower pattern or path)`,
        );
      }
      return {
        output: shown.join("\n"),
        details: { kind: "matches", count: paths.length, truncated },
      };
    },
  });
}

/**
 * Throws ToolError INVALID_ARGUMENTS for a pattern whose matching could backtrack for ever
 * (`costlyGlob`: four `*` in one part cost 0.7 s on one 255-character name, four `**` parts
 * 1.5 s on one path 200 folders deep), holding the tool worker.
 */
function refuseCostly(pattern: string): void {
  if (costlyGlob(pattern) === undefined) return;
  throw new ToolError(
    "INVALID_ARGUMENTS",
    `Pattern "${pattern}" is too costly to match: use at most ${MAX_PART_WILDCARDS} "*" ` +
      `between two slashes and ${MAX_GLOBSTARS} "**" parts, then filter with grep`,
  );
}

type ReaddirCallback = (error: NodeJS.ErrnoException | null, entries: nodeFs.Dirent[]) => void;

/**
 * A `readdir` for tinyglobby's crawler that drops ignored entries, so ignored folders such as
 * node_modules are never descended into, and lists only real folders inside `top` (the search
 * folder, a real path). tinyglobby starts its crawl at a pattern's fixed part (`src/lib/*` lists
 * `src/lib` directly), so a pattern naming a symlinked folder (`docs/*` with `docs -> ~`) would
 * otherwise list where the link leads: such a folder, whose real path is not the path the
 * crawl took, lists as empty (checked before and after the listing, as the reads are). A folder
 * the crawl found as a folder entry of one listed here is not a link, and is not checked again.
 */
function filteredReaddir(rules: IgnoreRules, top: string): typeof nodeFs.readdir {
  const found = new Set<string>();
  const readdir = (path: string, _options: unknown, callback: ReaddirCallback) => {
    const dir = resolve(path);
    const known = found.delete(dir);
    (async () => {
      if (!known && !await isRealFolderIn(top, dir)) return [];
      await rules.loadAncestors(dir);
      const entries = await nodeFs.promises.readdir(dir, { withFileTypes: true });
      if (!known && !await isRealFolderIn(top, dir)) return [];
      for (const entry of entries) if (entry.isDirectory()) found.add(join(dir, entry.name));
      return entries;
    })()
      .then(
        (entries) =>
          callback(null, entries.filter((e) => !rules.ignores(join(dir, e.name), e.isDirectory()))),
        (error) => callback(error, []),
      );
  };
  return readdir as unknown as typeof nodeFs.readdir;
}

/** True when `dir` is inside `top` and is its own real path (no symlink on the way). */
async function isRealFolderIn(top: string, dir: string): Promise<boolean> {
  if (!isInside(top, dir)) return false;
  try {
    return await Deno.realPath(dir) === dir;
  } catch {
    return false;
  }
}
