/**
 * The git plumbing of `workspace_diff.ts`: finding the repository, a scratch copy of its index
 * (so that the real one is never written), and storing the workspace as it is on disk as a
 * tree. Every command goes through `runGit`. Only the first (`rev-parse`, which starts no
 * program a config could name) reads the repository's own `.git`; every later one runs in a
 * repository of tern's own over the work tree (`runGit`'s `isolated`), so no config of the
 * repository's (filter and diff drivers, `[include]`s, however long) is read at all, and a
 * `.gitattributes` naming a driver names one that does not exist.
 */
import { join, resolve } from "../core/path.ts";
import { after } from "../core/timer.ts";
import { FIFO_CHECK_MS } from "../core/fifo_search.ts";
import { findGitFifos, waitsOnFifo } from "../harness/rewind/git_fifos.ts";
import { TernError } from "../core/errors.ts";
import { lstatOrNull, openUnchanged } from "../core/verified_open.ts";
import { type GitEnvironment, type GitResult, runGit } from "../harness/hardened_git.ts";

/** What git may see of this process: `PATH` and `HOME` only. */
export interface GitAccess {
  /** `PATH` for git (default: this process's `PATH`). No other variable is passed through. */
  path?: string;
  /** `HOME` for git, so the person's ~/.gitconfig applies (default: this process's `HOME`). */
  home?: string;
  /** Milliseconds each git command may take before it is killed (default 10,000). */
  timeoutMs?: number;
  /**
   * The folder of tern's own object store (made when missing), where the snapshots' blobs and
   * trees are written instead of the repository's `.git/objects`: that folder is readable by
   * commands, and a snapshot holds files no tool may read (`.env`, untracked secrets). It
   * should lie in tern's home, which commands never see.
   */
  objects: string;
}

/** A repository found by {@linkcode openRepo}. */
export interface Repo {
  /** Where git runs: the workspace (absolute). */
  workspace: string;
  env: GitEnvironment;
  timeoutMs?: number;
  /** The real index, to copy (never to write). */
  indexPath: string;
  /**
   * Config of tern's runs: the repository's `info/exclude` as the excludes file, so that what
   * it ignores stays ignored (the person's own global excludes do not apply here).
   */
  config: [string, string][];
  /** tern's object store, and the repository's read beside it (see `GitAccess.objects`). */
  objects: { dir: string; alternate: string };
  /** The repository of tern's own (in its object store's folder) and the work tree's top. */
  isolated: { gitDir: string; workTree: string };
}

/** The largest index copied (bytes): a larger file is no index of a workspace tern diffs. */
const MAX_INDEX_BYTES = 512 * 1024 * 1024;

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";
const TREE_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const decoder = new TextDecoder();

/**
 * The repository around `workspace`, or undefined when it is not inside a work tree or git
 * cannot be started. @throws {TernError} when git times out or cannot read its config.
 */
export async function openRepo(workspace: string, access: GitAccess): Promise<Repo | undefined> {
  const env: GitEnvironment = { PATH: access.path ?? readEnv("PATH") ?? DEFAULT_PATH };
  const home = access.home ?? readEnv("HOME");
  if (home !== undefined) env.HOME = home;
  const base = { cwd: workspace, env, timeoutMs: access.timeoutMs };
  const probe = await runGit(
    [
      "rev-parse",
      "--is-inside-work-tree",
      "--show-toplevel",
      "--git-path",
      "index",
      "--git-path",
      "objects",
      "--git-path",
      "info/exclude",
    ],
    base,
  );
  if (probe?.timedOut) {
    throw new TernError(`Cannot compare the workspace: "git rev-parse" timed out`);
  }
  if (!probe || probe.code !== 0) return undefined;
  const [inside, top, indexPath, objectsPath, exclude] = decoder.decode(probe.stdout).split("\n");
  if (inside !== "true" || !top || !indexPath || !objectsPath || !exclude) return undefined;
  const alternate = resolve(workspace, objectsPath);
  // The variable separates folders with ":" (and quotes otherwise): one that holds either is
  // not named to it, and the comparison is not made.
  if (/[:"]/.test(alternate) || /[:"]/.test(access.objects)) {
    throw new TernError(
      `Cannot compare the workspace: git cannot be given "${alternate}" or ` +
        `"${access.objects}" as object folders (a path with ":" or a quote)`,
    );
  }
  await Deno.mkdir(access.objects, { recursive: true, mode: 0o700 });
  // The repository git runs in from here on: tern's own, empty but for HEAD, inside its object
  // store's folder (git reads only two-hex-digit folders there as objects).
  const gitDir = join(access.objects, "repository");
  await Deno.mkdir(join(gitDir, "refs"), { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(join(gitDir, "HEAD"), "ref: refs/heads/tern\n");
  return {
    ...base,
    workspace,
    indexPath: resolve(workspace, indexPath),
    config: [["core.excludesFile", resolve(workspace, exclude)]],
    objects: { dir: access.objects, alternate },
    isolated: { gitDir, workTree: resolve(workspace, top) },
  };
}

/** Runs `body` with a scratch copy of the repository's index, removed afterwards. */
export async function withScratchIndex<T>(
  repo: Repo,
  body: (index: string) => Promise<T>,
): Promise<T> {
  const scratch = await Deno.makeTempDir({ prefix: "tern-diff-" });
  try {
    const index = join(scratch, "index");
    try {
      await copyIndex(repo.indexPath, index);
    } catch (error) {
      // No index yet (a new repository): git starts from an empty one.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return await body(index);
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
}

/**
 * Copies the index at `from` to `to`, keeping its times, only when it is a regular file of at
 * most {@linkcode MAX_INDEX_BYTES}: opened without following a link and without blocking, so a
 * FIFO or a device put in its place is refused, never waited on or read forever.
 * @throws {Deno.errors.NotFound} when there is none; {@linkcode TernError} when it is no file.
 */
async function copyIndex(from: string, to: string): Promise<void> {
  const info = lstatOrNull(from);
  if (info === null) throw new Deno.errors.NotFound(from);
  const refuse = (why: string) =>
    new TernError(`Cannot compare the workspace: the git index "${from}" ${why}`);
  if (!info.isFile) throw refuse("is not a regular file");
  if (info.size > MAX_INDEX_BYTES) throw refuse(`is over ${MAX_INDEX_BYTES} bytes`);
  using file = openUnchanged(from, info);
  if (file === null) throw refuse("changed while it was opened");
  const out = await Deno.open(to, { write: true, createNew: true, mode: 0o600 });
  try {
    let copied = 0;
    for await (const chunk of file.chunks()) {
      copied += chunk.length;
      if (copied > MAX_INDEX_BYTES) throw refuse(`is over ${MAX_INDEX_BYTES} bytes`);
      for (let at = 0; at < chunk.length;) at += await out.write(chunk.subarray(at));
    }
  } finally {
    out.close();
  }
  // git trusts an entry's stat data only when the file is older than the index ("racy git"),
  // so the copy keeps the index's time, or an edit made in the second the index was written
  // would go unseen. Rounded down to milliseconds, git can only re-read more.
  if (info.mtime) await Deno.utime(to, info.atime ?? info.mtime, info.mtime);
}

/** Untracked, non-ignored files under the workspace, relative to it; nested repositories left out. */
export async function untrackedPaths(repo: Repo, index: string): Promise<string[]> {
  const args = ["ls-files", "--others", "--exclude-standard", "-z", "--", "."];
  const listed = await mustRun(repo, args, { index });
  return nulList(listed).filter((path) => !path.endsWith("/"));
}

/** The NUL-terminated names git printed; a cut-off last one is dropped. */
export function nulList(result: GitResult): string[] {
  const names = decoder.decode(result.stdout).split("\0");
  names.pop();
  return names.filter((name) => name !== "");
}

/**
 * Stages the workspace into the scratch `index` (tracked files as they are on disk, plus the
 * untracked paths in `keep`) and writes it as a tree; returns the tree's id.
 */
export async function writeSnapshot(
  repo: Repo,
  index: string,
  keep: readonly string[],
): Promise<string> {
  await mustRun(repo, ["add", "--update", "--", "."], { index });
  if (keep.length > 0) {
    const list = join(index, "..", "paths");
    await Deno.writeTextFile(list, keep.map((path) => `${path}\0`).join(""));
    const args = ["add", "--force", `--pathspec-from-file=${list}`, "--pathspec-file-nul"];
    await mustRun(repo, args, { index });
  }
  const tree = decoder.decode((await mustRun(repo, ["write-tree"], { index })).stdout).trim();
  if (!TREE_ID.test(tree)) {
    throw new TernError(`Cannot snapshot the workspace: git write-tree printed "${tree}"`);
  }
  return tree;
}

/**
 * Runs git in the workspace with the repository's overrides and insists on an exit code in
 * `okCodes` (default 0); output cut at `maxBytes` counts as success.
 * @throws {TernError} naming the command and git's first line of error.
 */
export async function mustRun(
  repo: Repo,
  args: string[],
  options: { index?: string; maxBytes?: number; okCodes?: number[] } = {},
): Promise<GitResult> {
  // git opens every .gitignore and .gitattributes it meets, and waits on one that is a FIFO (a
  // command can make one): one still running after FIFO_CHECK_MS has the workspace searched,
  // and a FIFO found stops it with an error naming it, not its timeout, at every /diff.
  const stop = new AbortController();
  let fifo: string | undefined;
  const check = after(FIFO_CHECK_MS, () => {
    findGitFifos(repo.workspace, repo.env.PATH).then((found) => {
      fifo = found[0];
      if (fifo !== undefined) stop.abort();
    });
  });
  const result = await runGit(args, {
    cwd: repo.workspace,
    env: repo.env,
    indexFile: options.index,
    objects: repo.objects,
    isolated: repo.isolated,
    config: repo.config,
    maxBytes: options.maxBytes,
    timeoutMs: repo.timeoutMs,
    signal: stop.signal,
  }).finally(() => check.cancel());
  const command = `git ${args[0]}`;
  if (fifo !== undefined && stop.signal.aborted) {
    throw new TernError(`Cannot compare the workspace: ${waitsOnFifo(repo.workspace, fifo)}`);
  }
  if (!result) throw new TernError(`Cannot run "${command}": git is not available`);
  if (result.timedOut) throw new TernError(`Cannot compare the workspace: "${command}" timed out`);
  if (!(options.okCodes ?? [0]).includes(result.code) && !result.truncated) {
    const detail = result.stderr.split("\n", 1)[0] || `exit code ${result.code}`;
    throw new TernError(`Cannot compare the workspace: "${command}" failed: ${detail}`);
  }
  return result;
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
