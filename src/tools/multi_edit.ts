/**
 * The `multi_edit` tool: several exact replacements in one file, applied all or none and
 * written once. Everything else it gets (confinement in the worker, review, plan path locks,
 * the UI's diff, the audit's paths) comes from what it declares below.
 */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "./define.ts";
import { dominantEol, readEditableText, withEol } from "./_edit_text.ts";
import { unifiedDiff } from "./file_diff.ts";
import { displayPath, quotedPath } from "./paths.ts";
import { writeFileVerified } from "./verified_io.ts";
import type { WriteToolOptions } from "./write.ts";

/** Most replacements in one call. */
export const MAX_EDITS = 100;

export const multiEditParameters = z.strictObject({
  path: z.string().min(1).describe("Path of the file, relative to the workspace root"),
  edits: z.array(
    z.strictObject({
      old_string: z.string().min(1).describe(
        "The exact text to replace, with its whitespace and indentation; it must occur exactly once",
      ),
      new_string: z.string().describe("The text to put in its place"),
    }),
  ).min(1).max(MAX_EDITS).describe(
    "The replacements, applied in order, each to the text as the edits before it left it",
  ),
});

export type MultiEditArgs = z.infer<typeof multiEditParameters>;

const DESCRIPTION =
  `Make several exact replacements in one existing file at once. Paths are relative to the workspace root.
Edits apply in order, each to the result of the ones before; each old_string must occur exactly once
(whitespace included). If any edit fails, the file is left unchanged. The file's line endings are kept.
Read the file first; for a single change use edit, to create a file use write.`;

/** Creates the `multi_edit` tool; `options` as for `createWriteTool`. */
export function createMultiEditTool(options: WriteToolOptions = {}): Tool {
  return defineTool({
    name: "multi_edit",
    description: DESCRIPTION,
    parameters: multiEditParameters,
    readOnly: false,
    runsIn: "worker",
    paths: (args) => [{ path: args.path, write: true }],
    async execute(args, ctx) {
      const fail = (code: "INVALID_ARGUMENTS" | "EXECUTION_FAILED", detail: string) =>
        new ToolError(code, `Cannot edit "${args.path}": ${detail}`);
      for (const [index, edit] of args.edits.entries()) {
        if (edit.old_string === edit.new_string) {
          throw fail(
            "INVALID_ARGUMENTS",
            `${which(index, args)}: old_string and new_string are identical`,
          );
        }
      }
      const { checked, real, text, mode } = await readEditableText(args.path, ctx, options);
      const eol = dominantEol(text);
      let updated = text;
      for (const [index, edit] of args.edits.entries()) {
        const needle = [edit.old_string, withEol(edit.old_string, eol)]
          .find((candidate) => updated.includes(candidate));
        if (needle === undefined) {
          throw fail(
            "EXECUTION_FAILED",
            `${which(index, args)}: old_string was not found` +
              (index > 0 ? " in the text the edits before it left" : "") +
              "; nothing was changed",
          );
        }
        const count = updated.split(needle).length - 1;
        if (count > 1) {
          throw fail(
            "EXECUTION_FAILED",
            `${which(index, args)}: old_string occurs ${count} times; add surrounding lines to ` +
              "make it unique; nothing was changed",
          );
        }
        const at = updated.indexOf(needle);
        updated = updated.slice(0, at) + withEol(edit.new_string, eol) +
          updated.slice(at + needle.length);
      }
      writeFileVerified(checked, updated, { mode });
      const path = displayPath(ctx.workspace, real);
      const n = args.edits.length;
      return {
        output: `Made ${n} ${n === 1 ? "replacement" : "replacements"} in ${
          quotedPath(ctx.workspace, real)
        }`,
        details: { kind: "diff", path, diff: unifiedDiff(path, text, updated) },
      };
    },
  });
}

/** `edit 2 of 3`, as errors name the failing edit. */
function which(index: number, args: MultiEditArgs): string {
  return `edit ${index + 1} of ${args.edits.length}`;
}
