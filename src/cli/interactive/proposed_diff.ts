/**
 * The change a call that writes a whole file (`content`) or replaces exact text
 * (`old_string`/`new_string`, or several such `edits` in order) would make, as a unified diff
 * for the permission dialog. Read-only and best effort: a file that cannot be read shows no diff.
 *
 * The file's text is read in tern's process, so it is read as tern reads any file for the model
 * (readWorkspaceText with the conversation's read guard): never through a link out of the
 * workspace, never a file the model could not read itself (a deny rule's, a home secret). A
 * repository's (or a command's) `k -> ~/.ssh/id_rsa` would otherwise print the key in the
 * dialog of a `write {"path": "k"}`; such a call shows no diff, and says why.
 */
import { isAbsolute, relative, resolve } from "../../core/path.ts";
import { type ReadRefusal, readWorkspaceText } from "../../config/workspace_file.ts";
import { unifiedDiff } from "../../tui/diff_view.ts";
import type { ReviewRequest } from "../../sandbox/review.ts";
import { MAX_EDITS } from "../../tools/multi_edit.ts";

/** Largest file read to show a diff, in bytes. */
const MAX_DIFF_SOURCE = 1_000_000;

/**
 * Longest text a call's change may make for a diff, in characters: an `edit` with `replace_all`
 * of one character by 100,000 in a file of 100,000 would make 10 GB (tern ran out of memory
 * before the question was shown, and an editor's connection dropped on the message).
 */
export const MAX_DIFF_AFTER = 2 * MAX_DIFF_SOURCE;

/**
 * Characters the replacements of one call may go through to make its text after, in all: each
 * goes through the whole text, and the call's arguments are the model's, not yet checked by the
 * tool (200 `replace_all` edits of a 1 MB file held tern's thread for 12 s).
 */
const MAX_DIFF_WORK = 20 * MAX_DIFF_SOURCE;

/** How the file's text before the call is read. */
export interface DiffReading {
  /** What tern may not read for the model (Conversation.readRefusal()): shown as no diff. */
  refuse: ReadRefusal;
}

/** What a call would change in a file, its text before and after. */
export interface ProposedChange {
  /** The file, absolute. */
  path: string;
  /** The file relative to the workspace. */
  shown: string;
  before: string;
  after: string;
}

/** The text of a file that is not shown, and why (one line). */
export interface Withheld {
  withheld: string;
}

/**
 * A unified diff of what `request` would change, or why it shows none (a file the model may not
 * read); undefined for other tools or unreadable files.
 */
export function proposedDiff(
  request: ReviewRequest,
  workspace: string,
  reading: DiffReading,
): { diff: string } | Withheld | undefined {
  const change = proposedChange(request.args, workspace, reading);
  if (change === undefined || "withheld" in change) return change;
  return { diff: unifiedDiff(change.shown, change.before, change.after) };
}

/**
 * The file a call with `args` would change (absolute, and as shown relative to `workspace`)
 * with its text before and after, or why its text is not shown; undefined for other shapes,
 * files outside the workspace and unreadable files. Never throws.
 */
export function proposedChange(
  args: unknown,
  workspace: string,
  reading: DiffReading,
): ProposedChange | Withheld | undefined {
  const record = args as Record<string, unknown> | null;
  if (record === null || typeof record !== "object" || typeof record.path !== "string") {
    return undefined;
  }
  const path = resolve(workspace, record.path);
  const shown = relative(workspace, path);
  // Files outside the workspace are the sandbox's business; the dialog shows no content of them.
  if (shown.startsWith("..") || isAbsolute(shown)) return undefined;
  // By the call's shape, not the tool's name: a whole new content, or one exact replacement.
  const edits = typeof record.content === "string" ? [] : replacements(record);
  if (edits === undefined) return undefined;
  const before = readBefore(workspace, path, reading);
  if (typeof before === "object") return before;
  if (typeof record.content === "string") {
    if (record.content.length > MAX_DIFF_AFTER) return tooLarge(record.content.length);
    return { path, shown, before: before ?? "", after: record.content };
  }
  if (before === undefined) return undefined;
  let after = before;
  let work = 0;
  for (const edit of edits) {
    work += after.length;
    if (work > MAX_DIFF_WORK) {
      return {
        withheld: `its ${edits.length} replacements are too much work to show before it runs`,
      };
    }
    if (edit.old === "" || !after.includes(edit.old)) return undefined;
    // Its length first: the text is made only when a diff could show it.
    const length = after.length +
      (edit.all ? occurrences(after, edit.old) : 1) * (edit.new.length - edit.old.length);
    if (length > MAX_DIFF_AFTER) return tooLarge(length);
    after = edit.all
      ? after.split(edit.old).join(edit.new)
      : after.replace(edit.old, () => edit.new);
  }
  return { path, shown, before, after };
}

/** How many times `part` (not empty) occurs in `text` without overlapping, as split() counts. */
function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count++;
  return count;
}

function tooLarge(length: number): Withheld {
  return {
    withheld: `the file would be ${length.toLocaleString("en-US")} characters after this call, ` +
      `more than the ${MAX_DIFF_AFTER.toLocaleString("en-US")} a diff is shown for`,
  };
}

interface Replacement {
  old: string;
  new: string;
  all: boolean;
}

/**
 * The exact replacements a call asks for, in order, in the shapes the tools take: one
 * (`old_string`/`new_string`, with `replace_all`) or several (`edits` of at most
 * `multi_edit`'s {@linkcode MAX_EDITS}, each applied to what the ones before left, never all occurrences);
 * undefined for any other shape (the tool refuses it, and there is nothing to show).
 */
function replacements(args: Record<string, unknown>): Replacement[] | undefined {
  const one = (value: unknown, all: boolean): Replacement | undefined => {
    const edit = value as Record<string, unknown> | null;
    if (edit === null || typeof edit !== "object") return undefined;
    if (typeof edit.old_string !== "string" || typeof edit.new_string !== "string") {
      return undefined;
    }
    if (!all && "replace_all" in edit) return undefined;
    return { old: edit.old_string, new: edit.new_string, all: all && edit.replace_all === true };
  };
  if (Array.isArray(args.edits)) {
    if (args.edits.length > MAX_EDITS) return undefined;
    const edits = args.edits.map((edit) => one(edit, false));
    return edits.length > 0 && edits.every((edit) => edit !== undefined)
      ? edits as Replacement[]
      : undefined;
  }
  const single = one(args, true);
  return single === undefined ? undefined : [single];
}

/**
 * The file's text as tern reads one for the model; "" when it does not exist; why not when it
 * is refused (a link out, a file the model may not read, too large); undefined when it cannot
 * be read (a folder, no permission).
 */
function readBefore(
  workspace: string,
  path: string,
  reading: DiffReading,
): string | Withheld | undefined {
  const what = "the file";
  let why: string | undefined;
  try {
    const text = readWorkspaceText(workspace, path, {
      what,
      maxBytes: MAX_DIFF_SOURCE,
      refuse: reading.refuse,
      warn: (line) => why = line,
    });
    if (text !== undefined) return text;
    if (why === undefined) return "";
    // The reader's line is `Skipping the file "<path>": <why>`; the dialog names the file.
    const prefix = `Skipping ${what} "${path}": `;
    return { withheld: why.startsWith(prefix) ? why.slice(prefix.length) : why };
  } catch {
    return undefined;
  }
}
