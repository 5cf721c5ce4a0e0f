/** The `write` tool: creates or replaces a whole file, atomically. */
import { dirname } from "../core/path.ts";
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { unifiedDiff } from "./file_diff.ts";
import { countLines, decodeUtf8Strict, keptMode } from "./file_io.ts";
import { type CheckedPath, checkPath, displayPath, quotedPath } from "./paths.ts";
import { makeDirsVerified, openVerified, writeFileVerified } from "./verified_io.ts";

export const writeParameters = z.strictObject({
  path: z.string().min(1).describe("Path of the file, relative to the workspace root"),
  content: z.string().describe("The complete new content of the file"),
});

export type WriteArgs = z.infer<typeof writeParameters>;

/** Options for {@linkcode createWriteTool} and `createEditTool`. */
export interface WriteToolOptions {
  /**
   * Allow changing files in protected folders (`.git` at any depth, `.tern`); default false,
   * so hooks, git config and tern's own config cannot be changed through the tool.
   */
  allowProtectedWrites?: boolean;
}

/** Existing files larger than this are replaced without a diff for the UI. */
const MAX_DIFF_BYTES = 1_000_000;

const DESCRIPTION =
  `Create a file or replace its whole content. Paths are relative to the workspace root.
Missing parent folders are created. To change part of an existing file, prefer edit.`;

/** Creates the `write` tool. */
export function createWriteTool(options: WriteToolOptions = {}): Tool {
  return defineTool({
    name: "write",
    description: DESCRIPTION,
    parameters: writeParameters,
    readOnly: false,
    runsIn: "worker",
    paths: (args) => [{ path: args.path, write: true }],
    async execute(args, ctx) {
      const checked = await checkPath(ctx.workspace, args.path, {
        forWrite: true,
        allowProtected: options.allowProtectedWrites,
        roots: ctx.roots,
      });
      const { real, info } = checked;
      if (info?.isDirectory) {
        throw new ToolError("EXECUTION_FAILED", `Cannot write "${args.path}": it is a directory`);
      }
      const before = oldText(checked);
      try {
        makeDirsVerified(checked.root, dirname(real), args.path);
      } catch (error) {
        if (
          !(error instanceof Deno.errors.NotADirectory ||
            error instanceof Deno.errors.AlreadyExists)
        ) {
          throw error;
        }
        throw new ToolError(
          "EXECUTION_FAILED",
          `Cannot write "${args.path}": a parent path is a file, not a directory`,
        );
      }
      const mode = typeof info?.mode === "number" ? keptMode(info.mode) : undefined;
      writeFileVerified(checked, args.content, { mode });
      const path = displayPath(ctx.workspace, real);
      const bytes = new TextEncoder().encode(args.content).length;
      const lines = countLines(args.content);
      const verb = info === null ? "Created" : "Overwrote";
      const diff = before === null
        ? "(diff skipped: the previous content is large or not UTF-8 text)"
        : unifiedDiff(path, before, args.content);
      return {
        output: `${verb} ${quotedPath(ctx.workspace, real)} (${bytes} bytes, ${lines} lines)`,
        details: { kind: "diff", path, diff },
      };
    },
  });
}

/** The replaced text, for the UI diff: "" for a new file, null when too large or not text. */
function oldText(checked: CheckedPath): string | null {
  if (checked.info === null) return "";
  if (checked.info.size > MAX_DIFF_BYTES) return null;
  using file = openVerified(checked);
  return decodeUtf8Strict(file.readAll());
}
