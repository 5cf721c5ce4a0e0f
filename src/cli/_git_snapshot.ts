/**
 * The git plumbing of `workspace_diff.ts`: finding the repository, a scratch copy of its index
 * (so that the real one is never written), and storing the workspace as it is on disk as a
 * tree. Every command goes through `runGit`, with the repository's filter drivers switched off.
 */
import { join, resolve } from "../core/path.ts";
import { TernError } from "../core/errors.ts";
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
  /** Switches off every filter driver the repository defines. */
  config: [string, string][];
  /** tern's object store, and the repository's read beside it (see `GitAccess.objects`). */
  objects: { dir: string; alternate: string };
}

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
    ["rev-parse", "--is-inside-work-tree", "--git-path", "index", "--git-path", "objects"],
    base,
  );
  if (probe?.timedOut) {
    throw new TernError(`Cannot compare the workspace: "git rev-parse" timed out`);
  }
  if (!probe || probe.code !== 0) return undefined;
  const [inside, indexPath, objectsPath] = decoder.decode(probe.stdout).split("\n");
  if (inside !== "true" || !indexPath || !objectsPath) return undefined;
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
  const repo: Repo = {
    ...base,
    workspace,
    indexPath: resolve(workspace, indexPath),
    config: [],
    objects: { dir: access.objects, alternate },
  };
  const filters = ["config", "-z", "--get-regexp", "^filter\\."];
  repo.config = filterOverrides(await mustRun(repo, filters, { okCodes: [0, 1] }));
  return repo;
}

/**
 * `filter.<driver>.{clean,smudge,process}` set empty for every driver named in the config
 * (`.gitattributes` can point any path at one): git then runs no filter program at all.
 */
function filterOverrides(result: GitResult): [string, string][] {
  const drivers = new Set<string>();
  for (const record of decoder.decode(result.stdout).split("\0")) {
    const key = record.split("\n", 1)[0];
    const driver = key.match(/^filter\.(.+)\.[^.]+$/s)?.[1];
    if (driver !== undefined) drivers.add(driver);
  }
  return [...drivers].flatMap((driver): [string, string][] => [
    [`filter.${driver}.clean`, ""],
    [`filter.${driver}.smudge`, ""],
    [`filter.${driver}.process`, ""],
    [`filter.${driver}.required`, "false"],
  ]);
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
      // git trusts an entry's stat data only when the file is older than the index ("racy
      // git"), so the copy keeps the index's time, or an edit made in the second the index
      // was written would go unseen. Reading the time first and rounding it down to
      // milliseconds can only make git re-read more.
      const { atime, mtime } = await Deno.stat(repo.indexPath);
      await Deno.copyFile(repo.indexPath, index);
      if (mtime) await Deno.utime(index, atime ?? mtime, mtime);
    } catch (error) {
      // No index yet (a new repository): git starts from an empty one.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return await body(index);
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
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
  const result = await runGit(args, {
    cwd: repo.workspace,
    env: repo.env,
    indexFile: options.index,
    objects: repo.objects,
    config: repo.config,
    maxBytes: options.maxBytes,
    timeoutMs: repo.timeoutMs,
  });
  const command = `git ${args[0]}`;
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
