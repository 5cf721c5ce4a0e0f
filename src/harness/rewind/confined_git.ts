/**
 * git for the checkpoint store's commands that read the workspace (`ls-files`, `update-index`;
 * once FIFOs git would wait on are known, also those that only read `.gitattributes`), run in
 * the store's view (view.ts): the workspace read-only, the store writable, the system's
 * programs read-only and nothing else. The store first checks with lstat that no folder above a
 * path is a symlink, but git opens the path itself afterwards: a folder swapped for a link to
 * outside in between would let git store an outside file's content as a blob (which a rewind
 * then writes into the workspace). In the view such a link leads nowhere. Without bubblewrap, or
 * when git cannot run in the view, this is `runGit` on the host.
 *
 * The run itself is `runGit`'s with git started by bubblewrap (its `launcher`): the same
 * isolated environment, switches, capped output and a timeout that kills bubblewrap and so
 * everything in the view.
 */
import { hostProgram } from "../../core/host_programs.ts";
import { TernError } from "../../core/errors.ts";
import { type GitResult, type GitRunOptions, runGit } from "../hardened_git.ts";
import { releasingFifos, waitsOnFifo } from "./git_fifos.ts";
import { viewLauncher, type ViewMount } from "./view.ts";

/** Whether git runs in a view, per git executable (probed once, after a failure). */
const probes = new Map<string, Promise<boolean>>();

/** Options of {@linkcode runWorkspaceGit}: runGit's, with the store and its workspace. */
export interface WorkspaceGitOptions extends GitRunOptions {
  isolated: { gitDir: string; workTree: string };
  /** The workspace (an absolute real path) that `isolated.workTree` lies in or is. */
  workspace: string;
  /**
   * FIFOs in the workspace (absolute paths) named like a file git reads as it goes
   * (git_fifos.ts): in the view git runs with a writer waiting on each, so it reads them as
   * empty. Where git would run on the host instead, it is not run: a TernError names the first.
   */
  fifos?: readonly string[];
}

/**
 * Runs `git <args>` for the store `options.isolated.gitDir` in the store's view when bubblewrap
 * works here, else on the host ({@linkcode runGit}). Returns undefined when git cannot be
 * started; never leaves a process behind.
 *
 * Whether git itself runs in the view (a git installed where the view does not show its files
 * would not) is probed only once a run in the view fails, not before the first: the first
 * checkpoint is on the first writing call's path. A failure the probe does not explain is
 * git's own and is returned; one it explains runs again on the host, as every later command.
 * Only a probe of the view itself (`git --version` at `/`) decides, never the workspace.
 */
export async function runWorkspaceGit(
  args: readonly string[],
  options: WorkspaceGitOptions,
): Promise<GitResult | undefined> {
  let git: string;
  try {
    git = Deno.realPathSync(hostProgram("git", options.env.PATH));
  } catch {
    return undefined;
  }
  const fifos = options.fifos ?? [];
  let sh: string | undefined;
  try {
    if (fifos.length > 0) sh = Deno.realPathSync(hostProgram("sh", options.env.PATH));
  } catch {
    throw waitsOn(fifos, options.workspace);
  }
  const launcher = probes.get(git) === undefined || await probes.get(git)
    ? await storeView(git, options, options.cwd, sh)
    : undefined;
  if (launcher === undefined) {
    if (sh !== undefined) throw waitsOn(fifos, options.workspace);
    return await runGit(args, options);
  }
  const release = sh === undefined ? [] : releasingFifos(sh, fifos);
  const result = await runGit(args, { ...options, launcher: [...launcher, ...release, git] });
  // Stopped by its signal, it failed for no reason of the view's.
  const stopped = options.signal?.aborted === true;
  if (result?.code === 0 || stopped || await runsInView(git, options)) return result;
  if (sh !== undefined) throw waitsOn(fifos, options.workspace);
  return await runGit(args, options);
}

/** The error for git that would wait on `fifos` (run on the host, where nothing releases them). */
function waitsOn(fifos: readonly string[], workspace: string): TernError {
  return new TernError(`Cannot run git on the workspace: ${waitsOnFifo(workspace, fifos[0])}`);
}

/**
 * The view's launcher for `options`' store and workspace, working folder `cwd`, with the
 * shell `sh` too when given.
 */
function storeView(
  git: string,
  options: WorkspaceGitOptions,
  cwd: string,
  sh?: string,
): Promise<string[] | undefined> {
  const mounts: ViewMount[] = [
    // The executable (the commands run here are built in), wherever it is installed.
    { path: git, writable: false },
    { path: options.workspace, writable: false },
    { path: options.isolated.gitDir, writable: true },
  ];
  if (sh !== undefined) mounts.unshift({ path: sh, writable: false });
  return viewLauncher(mounts, cwd);
}

/** Whether `git --version` runs in the view (probed once per executable). */
function runsInView(git: string, options: WorkspaceGitOptions): Promise<boolean> {
  let works = probes.get(git);
  if (works === undefined) {
    works = storeView(git, options, "/").then(async (launcher) => {
      if (launcher === undefined) return false;
      const tried = await runGit(["--version"], {
        ...options,
        signal: undefined,
        launcher: [...launcher, git],
      });
      return tried?.code === 0;
    });
    probes.set(git, works);
  }
  return works;
}
