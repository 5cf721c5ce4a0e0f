/**
 * The bubblewrap view of the processes that read the workspace for a checkpoint (git) or write
 * it for a rewind (the restore process). Their checks that no folder on a path is a symlink can
 * be raced: a command's background process can swap a folder for a link to outside
 * (`renameat2(RENAME_EXCHANGE)`) between the check and the open, and Deno's `--allow-write`
 * checks a path as text, not where links lead. So they run where nothing else exists: the root
 * is an empty folder holding, read-only, only the system's programs and libraries and what the
 * process runs from, plus the workspace (read-only for a snapshot, writable for a restore) and
 * tern's store. A link swapped in at any moment then leads nowhere, or to a read-only system
 * file. Where bubblewrap cannot start a sandbox (macOS, a container without user namespaces)
 * there is no view and these processes run on the host as before.
 */
import { bwrapProgram, probeBwrap } from "../../sandbox/bwrap.ts";
import { LIBRARY_PATHS } from "../../sandbox/worker/view.ts";

/** One folder or file shown in a view, at its own path. */
export interface ViewMount {
  /**
   * An absolute path outside every folder commands may write, the workspace's real path, or a
   * path in it commands cannot change (`.git`, `.tern`): bubblewrap follows the links in it when
   * it mounts.
   */
  path: string;
  /** Writable, and then it must exist; a read-only one that does not is left out. */
  writable: boolean;
}

/**
 * The program and leading arguments that run a program (appended after them) in a view showing
 * only {@linkcode LIBRARY_PATHS} read-only, a `/proc` of its own, a minimal `/dev` and `mounts`
 * (mounted in order, so a later one covers an earlier one it lies in), with no network, no
 * capabilities, its working folder `cwd`; undefined when bubblewrap cannot start a sandbox here.
 * Never throws.
 */
export async function viewLauncher(
  mounts: readonly ViewMount[],
  cwd: string,
): Promise<string[] | undefined> {
  if (!(await probeBwrap()).ok) return undefined;
  const args = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  for (const path of LIBRARY_PATHS) args.push("--ro-bind-try", path, path);
  // Deno reads its stack's bounds in /proc; the process sees only its own there.
  args.push("--proc", "/proc", "--dev", "/dev");
  for (const mount of mounts) {
    args.push(mount.writable ? "--bind" : "--ro-bind-try", mount.path, mount.path);
  }
  // The root itself (where the mount points were made) is read-only too.
  args.push("--remount-ro", "/", "--chdir", cwd, "--");
  return [bwrapProgram(), ...args];
}
