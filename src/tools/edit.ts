/** The `edit` tool: exact string replacement in one file, keeping its line endings. */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { dominantEol, MAX_EDIT_BYTES, readEditableText, withEol } from "./_edit_text.ts";
import { unifiedDiff } from "./file_diff.ts";
import { displayPath, quotedPath } from "./paths.ts";
import { writeFileVerified } from "./verified_io.ts";
import type { WriteToolOptions } from "./write.ts";

export const editParameters = z.strictObject({
  path: z.string().min(1).describe("Path of the file, relative to the workspace root"),
  old_string: z.string().describe(
    "The exact text to replace, with its whitespace and indentation (without read's line numbers)",
  ),
  new_string: z.string().describe("The text to put in its place"),
  replace_all: z.boolean().optional().describe(
    "Replace every occurrence; default false, which requires old_string to occur exactly once",
  ),
});

export type EditArgs = z.infer<typeof editParameters>;

const DESCRIPTION =
  `Replace exact text in an existing file. Paths are relative to the workspace root.
old_string must match the file exactly (whitespace included) and occur once, unless replace_all is true;
include a few surrounding lines to make it unique. The file's line endings are kept.
Read the file first; to create a file or replace all of it, use write.`;

/** Creates the `edit` tool; `options` as for `createWriteTool`. */
export function createEditTool(options: WriteToolOptions = {}): Tool {
  return defineTool({
    name: "edit",
    description: DESCRIPTION,
    parameters: editParameters,
    readOnly: false,
    runsIn: "worker",
    paths: (args) => [{ path: args.path, write: true }],
    async execute(args, ctx) {
      const fail = (code: "INVALID_ARGUMENTS" | "EXECUTION_FAILED", detail: string) =>
        new ToolError(code, `Cannot edit "${args.path}": ${detail}`);
      if (args.old_string === "") {
        throw fail(
          "INVALID_ARGUMENTS",
          "old_string is empty; use write to create a file or replace all of it",
        );
      }
      if (args.old_string === args.new_string) {
        throw fail("INVALID_ARGUMENTS", "old_string and new_string are identical");
      }
      const { checked, real, text, mode } = await readEditableText(args.path, ctx, options);

      const eol = dominantEol(text);
      const match = findMatch(text, args.old_string, eol);
      if (match === null) throw fail("EXECUTION_FAILED", notFoundDetail(text, args.old_string));
      if (match.count > 1 && !args.replace_all) {
        throw fail(
          "EXECUTION_FAILED",
          `old_string occurs ${match.count} times; add surrounding lines to make it unique, ` +
            "or set replace_all to true",
        );
      }
      const replacement = withEol(args.new_string, eol);
      const count = args.replace_all ? match.count : 1;
      const length = text.length + count * (replacement.length - match.needle.length);
      if (length > MAX_EDIT_BYTES) {
        throw fail(
          "EXECUTION_FAILED",
          `the edit would make the file ${length} characters long, over the ${MAX_EDIT_BYTES} ` +
            "an edit may leave; nothing was changed",
        );
      }
      const updated = args.replace_all
        ? text.split(match.needle).join(replacement)
        : text.slice(0, match.index) + replacement + text.slice(match.index + match.needle.length);
      writeFileVerified(checked, updated, { mode });
      const path = displayPath(ctx.workspace, real);
      return {
        output: `Replaced ${count} ${count === 1 ? "occurrence" : "occurrences"} in ${
          quotedPath(ctx.workspace, real)
        }`,
        details: { kind: "diff", path, diff: unifiedDiff(path, text, updated) },
      };
    },
  });
}

interface Match {
  /** The text as found in the file (old_string with the file's line endings, if needed). */
  needle: string;
  /** Index of the first occurrence. */
  index: number;
  /** Non-overlapping occurrences. */
  count: number;
}

/** Finds `old` as given or with the file's line endings; null when neither occurs. */
function findMatch(text: string, old: string, eol: string): Match | null {
  for (const needle of new Set([old, withEol(old, eol)])) {
    const index = text.indexOf(needle);
    if (index !== -1) return { needle, index, count: text.split(needle).length - 1 };
  }
  return null;
}

function notFoundDetail(text: string, old: string): string {
  const base = "old_string was not found";
  if (/^ *\d+\t/m.test(old)) {
    return `${base}; it seems to contain line numbers from read, which are not part of the file`;
  }
  const squash = (s: string) => s.replace(/\s+/g, " ").trim();
  if (squash(old) !== "" && squash(text).includes(squash(old))) {
    return `${base} exactly, but it matches when whitespace is ignored; ` +
      "check indentation, tabs and line breaks";
  }
  return `${base}; read the file again and copy the current text exactly`;
}
