/**
 * Making the missing folder a `.git` file points at (see runtime.ts): each part below the last
 * one that exists is made from inside the one before, so a link a command swaps in for a folder
 * tern just made cannot lead the next one outside the workspace.
 */
import { basename, dirname } from "../core/path.ts";
import { hostProgram } from "../core/host_programs.ts";

/**
 * bash, given `readlink` (`$1`) and the existing parent (`$2`): enter the parent, then make each
 * following part and enter it, stopping where the folder entered is not the one just made (a
 * link swapped in meanwhile). Where it is comes from the kernel (`/proc/self/cwd`), never from
 * bash's `pwd -P`, which resolves the path's text again (a link swapped back by then made an
 * outside folder read as the one made). The folder entered stays the same inode whatever is
 * renamed after, so the next part is made in it.
 */
const MAKE_PARTS = 'r=$1; shift; cd -P -- "$1" && p=$("$r" /proc/self/cwd) || exit 1; shift; ' +
  'for part; do mkdir -- "$part" && cd -P -- "$part" && ' +
  '[ "$("$r" /proc/self/cwd)" = "${p%/}/$part" ] || exit 1; p="${p%/}/$part"; done';

/**
 * Makes `folder` and the folders between it and `first`, its first missing part (whose parent
 * exists). Where tern's own process may write there and only `first` is missing, it makes it
 * itself; otherwise the host's bash does, one part at a time from inside the last. False when
 * one cannot be made or a link stood where a part was made.
 */
export async function makeGitDirFolders(first: string, folder: string): Promise<boolean> {
  if (first === folder) {
    try {
      Deno.mkdirSync(folder);
      return true;
    } catch (error) {
      if (
        !(error instanceof Deno.errors.NotCapable ||
          error instanceof Deno.errors.PermissionDenied)
      ) return false;
    }
  }
  const rest = folder === first ? [] : folder.slice(first.length + 1).split("/");
  try {
    const made = await new Deno.Command(hostProgram("bash"), {
      args: [
        "-c",
        MAKE_PARTS,
        "tern-mkdir",
        hostProgram("readlink"),
        dirname(first),
        basename(first),
        ...rest,
      ],
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return made.success;
  } catch {
    return false;
  }
}
