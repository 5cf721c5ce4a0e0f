/**
 * git for the checkpoint store's commands that read the workspace (`ls-files`, `update-index`),
 * run in the store's view (view.ts): the workspace read-only, the store writable, the system's
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
import { type GitResult, type GitRunOptions, runGit } from "../hardened_git.ts";
import { viewLauncher } from "./view.ts";

/** Whether git runs in a view, per git executable (probed once, after a failure). */
const probes = new Map<string, Promise<boolean>>();

/** Options of {@linkcode runWorkspaceGit}: runGit's, with the store and its workspace. */
export interface WorkspaceGitOptions extends GitRunOptions {
  isolated: { gitDir: string; workTree: string };
  /** The workspace (an absolute real path) that `isolated.workTree` lies in or is. */
  workspace: string;
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
  const launcher = probes.get(git) === undefined || await probes.get(git)
    ? await storeView(git, options, options.cwd)
    : undefined;
  if (launcher === undefined) return await runGit(args, options);
  const result = await runGit(args, { ...options, launcher: [...launcher, git] });
  if (result?.code === 0 || await runsInView(git, options)) return result;
  return await runGit(args, options);
}

/** The view's launcher for `options`' store and workspace, working folder `cwd`. */
function storeView(
  git: string,
  options: WorkspaceGitOptions,
  cwd: string,
): Promise<string[] | undefined> {
  return viewLauncher([
    // The executable (the commands run here are built in), wherever it is installed.
    { path: git, writable: false },
    { path: options.workspace, writable: false },
    { path: options.isolated.gitDir, writable: true },
  ], cwd);
}

/** Whether `git --version` runs in the view (probed once per executable). */
function runsInView(git: string, options: WorkspaceGitOptions): Promise<boolean> {
  let works = probes.get(git);
  if (works === undefined) {
    works = storeView(git, options, "/").then(async (launcher) => {
      if (launcher === undefined) return false;
      const tried = await runGit(["--version"], { ...options, launcher: [...launcher, git] });
      return tried?.code === 0;
    });
    probes.set(git, works);
  }
  return works;
}
