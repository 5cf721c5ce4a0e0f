/** The `list` tool: the entries of a folder, a few levels deep, without ignored files. */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { IgnoreRules, walk } from "./ignore_rules.ts";
import { checkPath, displayPath, quotedName } from "./paths.ts";

/** Deepest `depth` accepted. */
export const MAX_LIST_DEPTH = 5;
/** Entries shown at most; the rest are counted in a note. */
export const MAX_LIST_ENTRIES = 1000;

export const listParameters = z.strictObject({
  path: z.string().min(1).default(".").describe(
    "Folder to list, relative to the workspace root; default the root",
  ),
  depth: z.number().int().min(1).max(MAX_LIST_DEPTH).default(1).describe(
    "How many levels to descend: 1 lists only the folder's own entries",
  ),
});

export type ListArgs = z.infer<typeof listParameters>;

const DESCRIPTION = `List a folder of the workspace. Paths are relative to the workspace root.
Prints one workspace-relative path per line, sorted by name, each folder followed by its contents
(down to depth). Folders end with "/"; symlinks show "-> target" and are not followed.
Skips .git and files ignored by .gitignore. At most ${MAX_LIST_ENTRIES} entries.`;

/** Creates the `list` tool. */
export function createListTool(): Tool {
  return defineTool({
    name: "list",
    description: DESCRIPTION,
    parameters: listParameters,
    readOnly: true,
    runsIn: "worker",
    paths: (args) => [{ path: args.path, write: false }],
    async execute(args, ctx) {
      const { real, root, info } = await checkPath(ctx.workspace, args.path, {
        roots: ctx.roots,
      });
      if (info === null) {
        throw new ToolError("NOT_FOUND", `Cannot list "${args.path}": not found`);
      }
      if (!info.isDirectory) {
        throw new ToolError(
          "EXECUTION_FAILED",
          `Cannot list "${args.path}": it is a file; use read to see its content`,
        );
      }
      const lines: string[] = [];
      let more = false;
      const rules = new IgnoreRules(root);
      for await (const entry of walk(real, rules, { maxDepth: args.depth, signal: ctx.signal })) {
        if (lines.length >= MAX_LIST_ENTRIES) {
          more = true;
          break;
        }
        const path = displayPath(ctx.workspace, entry.path);
        if (entry.isDirectory) lines.push(`${path}/`);
        // The target is the repository's text as much as a name: quoted the same way, so it
        // cannot forge lines of the listing or carry escape sequences to the model.
        else if (entry.isSymlink) {
          lines.push(`${path} -> ${quotedName(await linkTarget(entry.path))}`);
        } else lines.push(path);
      }
      if (lines.length === 0) return { output: "(empty directory)" };
      if (more) {
        lines.push(
          `(showing the first ${MAX_LIST_ENTRIES} entries; list a subfolder or use a smaller depth)`,
        );
      }
      return { output: lines.join("\n") };
    },
  });
}

/** Where the symlink at `path` points; "?" when it is gone or changed meanwhile. */
async function linkTarget(path: string): Promise<string> {
  try {
    return await Deno.readLink(path);
  } catch {
    return "?";
  }
}
