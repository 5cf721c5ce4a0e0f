/**
 * The folders a project's server names (`cwd`, `sandbox.writable`), checked where they really
 * are. A folder of the project may be a symlink to the home folder, or become one after trust
 * (a command of the agent can replace a folder by a link), and bubblewrap binds what a link
 * points to: so every such folder must lie inside the workspace with no symlink on the way,
 * checked when the config is read and again just before each start.
 */
import { isInside, join, relative, sep } from "../core/path.ts";

/** What a project folder is for: a writable one may not be in `.git` or the workspace's `.tern`. */
export type FolderUse = "cwd" | "writable";

/**
 * Why the project folder `path` (absolute, as the definition names it) may not be used, as the
 * rest of a sentence that starts with the path; undefined when it may. It must lie inside
 * `workspace` (a real path) and no part of it below the workspace may be a symlink or a file; a
 * writable one may not lie in a `.git` folder or the workspace's `.tern`. With `mustExist` (just
 * before a start) a folder that is not there is a problem too; when the config is read it is
 * not (it may be made before the server starts). Never throws.
 */
export function projectFolderProblem(
  path: string,
  workspace: string,
  options: { use: FolderUse; mustExist: boolean },
): string | undefined {
  if (!isInside(workspace, path)) {
    return "is outside the workspace — a project's server may use only folders inside it";
  }
  const parts = relative(workspace, path).split(sep).filter((part) => part !== "");
  if (options.use === "writable") {
    const guarded = parts[0] === ".tern" ? ".tern" : parts.includes(".git") ? ".git" : undefined;
    if (guarded !== undefined) {
      return `is in "${guarded}" — a project's server may not write there`;
    }
  }
  let current = workspace;
  for (const [index, part] of parts.entries()) {
    current = join(current, part);
    const shown = parts.slice(0, index + 1).join(sep);
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(current);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        return `cannot be checked: ${(error as Error).message}`;
      }
      return options.mustExist ? `does not exist — create the folder "${shown}"` : undefined;
    }
    if (info.isSymlink) {
      const target = linkTarget(current);
      const link = index === parts.length - 1
        ? "is a symlink"
        : `goes through the symlink "${shown}"`;
      return `${link}${target} — a project's server may name only real folders of the ` +
        "workspace: name the folder itself";
    }
    if (!info.isDirectory) return `is not a folder ("${shown}" is a file)`;
  }
  return undefined;
}

export { isInside };

function linkTarget(path: string): string {
  try {
    return ` (to "${Deno.readLinkSync(path)}")`;
  } catch {
    return "";
  }
}
