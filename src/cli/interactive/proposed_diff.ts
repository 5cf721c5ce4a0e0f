/**
 * The change a call that writes a whole file (`content`) or replaces exact text
 * (`old_string`/`new_string`) would make, as a unified diff for the permission
 * dialog. Read-only and best effort: a file that cannot be read shows no diff.
 */
import { isAbsolute, relative, resolve } from "node:path";
import { unifiedDiff } from "../../tui/diff_view.ts";
import type { ReviewRequest } from "../../sandbox/review.ts";

/** Largest file read to show a diff, in bytes. */
const MAX_DIFF_SOURCE = 1_000_000;

/** A unified diff of what `request` would change; undefined for other tools or unreadable files. */
export async function proposedDiff(
  request: ReviewRequest,
  workspace: string,
): Promise<string | undefined> {
  const args = request.args as Record<string, unknown> | null;
  if (args === null || typeof args !== "object" || typeof args.path !== "string") return undefined;
  const path = resolve(workspace, args.path);
  const shown = relative(workspace, path);
  // Files outside the workspace are the sandbox's business; the dialog shows no content of them.
  if (shown.startsWith("..") || isAbsolute(shown)) return undefined;
  // By the call's shape, not the tool's name: a whole new content, or one exact replacement.
  if (typeof args.content === "string") {
    return unifiedDiff(shown, await readOrEmpty(path) ?? "", args.content);
  }
  if (
    typeof args.old_string === "string" && typeof args.new_string === "string"
  ) {
    const before = await readOrEmpty(path);
    if (before === undefined || !before.includes(args.old_string)) return undefined;
    const after = args.replace_all === true
      ? before.split(args.old_string).join(args.new_string)
      : before.replace(args.old_string, () => args.new_string as string);
    return unifiedDiff(shown, before, after);
  }
  return undefined;
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
