/**
 * What changed in the workspace since a session began (`/diff`), using git without changing
 * the repository's index, working tree or refs.
 *
 * A snapshot is a git tree of the workspace as it is on disk: a scratch copy of the index
 * (`GIT_INDEX_FILE`) takes every tracked file's current content (`git add -u`) and the
 * untracked, non-ignored files small enough to keep (`git add -f <paths>`), and `git
 * write-tree` stores it (`git add` runs none of the repository's filter drivers: see
 * `_git_snapshot.ts`). The diff is then tree against tree and never reads the working tree
 * through textconv or an external diff. Blobs and trees are written to an object store of
 * tern's own (`GitAccess.objects`), with the repository's read beside it: nothing lands in the
 * repository's `.git`, which commands can read (a snapshot holds untracked secrets and files
 * the person's deny rules hide).
 * `git stash create` itself is not used: it rewrites the real index whenever a file's stat
 * data is stale, and it has nothing to offer a repository without commits.
 *
 * Untracked files too large to keep (over 1 MiB each, or past 2,000 files or 32 MiB in all)
 * are compared by size and modification time only, and reported in `notes`.
 */
import { join, resolve } from "../core/path.ts";
import { TernError } from "../core/errors.ts";
import type { GitResult } from "../harness/hardened_git.ts";
import {
  type GitAccess,
  mustRun,
  nulList,
  openRepo,
  untrackedPaths,
  withScratchIndex,
  writeSnapshot,
} from "./_git_snapshot.ts";

/** An untracked file as it was when the baseline was taken. */
export interface UntrackedFile {
  /** Bytes. */
  size: number;
  /** Modification time in milliseconds since the epoch. */
  mtimeMs: number;
  /** Its content is in the baseline tree; otherwise only size and time were kept. */
  kept: boolean;
}

/** The workspace at the start of a session. Plain JSON: it can be stored with the session. */
export interface Baseline {
  /** The git tree id of the snapshot. */
  tree: string;
  /** Untracked, non-ignored files at the time, by path relative to the workspace. */
  untracked: Record<string, UntrackedFile>;
  /** ISO time the baseline was taken. */
  created: string;
}

/** The changes since a baseline. */
export interface WorkspaceDiff {
  /** A unified diff (`a/` and `b/` prefixes, paths relative to the workspace), maybe cut. */
  patch: string;
  /** Every changed path relative to the workspace, sorted: the patch's and the notes'. */
  files: string[];
  /**
   * Changes the patch cannot show, one line each, as `<path>: <what>`: untracked files too
   * large to keep that are new, changed or removed. Show them after the patch.
   */
  notes: string[];
}

/** Options of {@linkcode captureBaseline} and {@linkcode workspaceDiff}. */
export interface WorkspaceDiffOptions extends GitAccess {
  /** Bytes of patch kept; the rest is cut with a marker line (default 2,000,000). */
  maxPatchBytes?: number;
}

const MAX_KEPT_FILE_BYTES = 1024 * 1024;
const MAX_KEPT_FILES = 2_000;
const MAX_KEPT_BYTES = 32 * 1024 * 1024;
const DEFAULT_PATCH_BYTES = 2_000_000;
/** Options of every diff: no external diff, no textconv, no color, no renames, fixed prefixes. */
const DIFF = [
  "diff",
  "--no-ext-diff",
  "--no-textconv",
  "--no-color",
  "--no-renames",
  "--relative",
  "--src-prefix=a/",
  "--dst-prefix=b/",
];
const decoder = new TextDecoder();

/**
 * A snapshot of `workspace`'s tracked and untracked (non-ignored) files, or undefined when it
 * is not inside a git work tree or git is not on `PATH`. Changes nothing in the repository.
 * @throws {TernError} when a git command fails or times out.
 */
export async function captureBaseline(
  workspace: string,
  options: WorkspaceDiffOptions,
): Promise<Baseline | undefined> {
  const repo = await openRepo(resolve(workspace), options);
  if (!repo) return undefined;
  const created = new Date().toISOString();
  return await withScratchIndex(repo, async (index) => {
    const untracked: Record<string, UntrackedFile> = {};
    const keep: string[] = [];
    const budget = keepBudget();
    for (const path of await untrackedPaths(repo, index)) {
      const stamp = await stampOf(join(repo.workspace, path));
      if (!stamp) continue;
      const kept = budget(stamp.size);
      untracked[path] = { ...stamp, kept };
      if (kept) keep.push(path);
    }
    return { tree: await writeSnapshot(repo, index, keep), untracked, created };
  });
}

/**
 * The changes in `workspace` since `baseline`: edited, added and deleted tracked files, new
 * untracked files shown as added, and untracked files present at the baseline compared with
 * their kept content (or, when too large to keep, by size and time in `notes`).
 * @throws {TernError} when the workspace is no longer in a git work tree, or git fails.
 */
export async function workspaceDiff(
  workspace: string,
  baseline: Baseline,
  options: WorkspaceDiffOptions,
): Promise<WorkspaceDiff> {
  const repo = await openRepo(resolve(workspace), options);
  if (!repo) {
    throw new TernError(`Cannot diff "${workspace}": it is not inside a git work tree now`);
  }
  return await withScratchIndex(repo, async (index) => {
    const keep: string[] = [];
    const notes = new Map<string, string>();
    const budget = keepBudget();
    const current = new Set(await untrackedPaths(repo, index));
    for (const path of current) {
      const before = baseline.untracked[path];
      if (before?.kept) {
        keep.push(path);
        continue;
      }
      const now = await stampOf(join(repo.workspace, path));
      if (!now) continue;
      if (before) {
        if (now.size !== before.size || now.mtimeMs !== before.mtimeMs) {
          notes.set(path, "changed since the session began (untracked, no earlier content kept)");
        }
      } else if (budget(now.size)) {
        keep.push(path);
      } else {
        const size = now.size.toLocaleString("en-US");
        notes.set(path, `new since the session began (untracked, ${size} bytes: not shown)`);
      }
    }
    const gone: string[] = [];
    for (const [path, before] of Object.entries(baseline.untracked)) {
      if (current.has(path)) continue;
      const exists = (await stampOf(join(repo.workspace, path))) !== undefined;
      // A kept file now tracked or ignored is still compared by content.
      if (before.kept && exists) keep.push(path);
      else if (!before.kept && !exists) gone.push(path);
    }
    const tree = await writeSnapshot(repo, index, keep);
    const names = await mustRun(repo, [...DIFF, "--name-only", "-z", baseline.tree, tree]);
    const files = new Set(nulList(names));
    for (const path of gone) {
      if (!files.has(path)) {
        notes.set(path, "removed since the session began (untracked, no earlier content kept)");
      }
    }
    const maxBytes = options.maxPatchBytes ?? DEFAULT_PATCH_BYTES;
    const diff = await mustRun(repo, [...DIFF, "--patch", baseline.tree, tree], { maxBytes });
    for (const path of notes.keys()) files.add(path);
    return {
      patch: patchText(diff, maxBytes),
      files: [...files].sort(),
      notes: [...notes].sort(([a], [b]) => a < b ? -1 : 1).map(([path, note]) =>
        `${path}: ${note}`
      ),
    };
  });
}

/** The patch text; a cut one ends at a whole line, then a marker line. */
function patchText(result: GitResult, maxBytes: number): string {
  const text = decoder.decode(result.stdout);
  if (!result.truncated) return text;
  const whole = text.slice(0, text.lastIndexOf("\n") + 1);
  return `${whole}[diff cut at ${maxBytes.toLocaleString("en-US")} bytes: the rest is not shown]\n`;
}

/** Says whether one more file of `size` bytes may be kept by content, and counts it if so. */
function keepBudget(): (size: number) => boolean {
  let files = 0;
  let bytes = 0;
  return (size) => {
    if (size > MAX_KEPT_FILE_BYTES || files >= MAX_KEPT_FILES || bytes + size > MAX_KEPT_BYTES) {
      return false;
    }
    files++;
    bytes += size;
    return true;
  };
}

/** Size and modification time of a file or symlink (not followed); undefined when it is gone. */
async function stampOf(path: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  try {
    const info = await Deno.lstat(path);
    if (info.isDirectory) return undefined;
    return { size: info.size, mtimeMs: info.mtime?.getTime() ?? 0 };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw error;
  }
}
