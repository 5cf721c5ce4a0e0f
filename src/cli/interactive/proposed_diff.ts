/**
 * The change a call that writes a whole file (`content`) or replaces exact text
 * (`old_string`/`new_string`, or several such `edits` in order) would make, as a unified diff
 * for the permission dialog. Read-only and best effort: a file that cannot be read shows no diff.
 */
import { isAbsolute, relative, resolve } from "../../core/path.ts";
import { unifiedDiff } from "../../tui/diff_view.ts";
import type { ReviewRequest } from "../../sandbox/review.ts";

/** Largest file read to show a diff, in bytes. */
const MAX_DIFF_SOURCE = 1_000_000;

/** A unified diff of what `request` would change; undefined for other tools or unreadable files. */
export async function proposedDiff(
  request: ReviewRequest,
  workspace: string,
): Promise<string | undefined> {
  const change = await proposedChange(request.args, workspace);
  return change && unifiedDiff(change.shown, change.before, change.after);
}

/**
 * The file a call with `args` would change (absolute, and as shown relative to `workspace`)
 * with its text before and after; undefined for other shapes, files outside the workspace and
 * unreadable files. Never throws.
 */
export async function proposedChange(
  args: unknown,
  workspace: string,
): Promise<{ path: string; shown: string; before: string; after: string } | undefined> {
  const record = args as Record<string, unknown> | null;
  if (record === null || typeof record !== "object" || typeof record.path !== "string") {
    return undefined;
  }
  const path = resolve(workspace, record.path);
  const shown = relative(workspace, path);
  // Files outside the workspace are the sandbox's business; the dialog shows no content of them.
  if (shown.startsWith("..") || isAbsolute(shown)) return undefined;
  // By the call's shape, not the tool's name: a whole new content, or one exact replacement.
  if (typeof record.content === "string") {
    return { path, shown, before: await readOrEmpty(path) ?? "", after: record.content };
  }
  const edits = replacements(record);
  if (edits === undefined) return undefined;
  const before = await readOrEmpty(path);
  if (before === undefined) return undefined;
  let after = before;
  for (const edit of edits) {
    if (edit.old === "" || !after.includes(edit.old)) return undefined;
    after = edit.all
      ? after.split(edit.old).join(edit.new)
      : after.replace(edit.old, () => edit.new);
  }
  return { path, shown, before, after };
}

interface Replacement {
  old: string;
  new: string;
  all: boolean;
}

/**
 * The exact replacements a call asks for, in order: one (`old_string`/`new_string`, with
 * `replace_all`) or several (`edits`, each applied to what the ones before left); undefined
 * for any other shape.
 */
function replacements(args: Record<string, unknown>): Replacement[] | undefined {
  const one = (value: unknown): Replacement | undefined => {
    const edit = value as Record<string, unknown> | null;
    if (edit === null || typeof edit !== "object") return undefined;
    if (typeof edit.old_string !== "string" || typeof edit.new_string !== "string") {
      return undefined;
    }
    return { old: edit.old_string, new: edit.new_string, all: edit.replace_all === true };
  };
  if (Array.isArray(args.edits)) {
    const edits = args.edits.map(one);
    return edits.length > 0 && edits.every((edit) => edit !== undefined)
      ? edits as Replacement[]
      : undefined;
  }
  const single = one(args);
  return single === undefined ? undefined : [single];
}

/** The file's text; "" when it does not exist; undefined when it cannot be shown. */
async function readOrEmpty(path: string): Promise<string | undefined> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile || info.size > MAX_DIFF_SOURCE) return undefined;
    return await Deno.readTextFile(path);
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? "" : undefined;
  }
}
