/**
 * The workspace's path before any command uses it: the process's current folder, or the one -C
 * names. Deno's file APIs take and give paths as strings, so a folder whose path is not UTF-8
 * cannot be named to them at all: `Deno.cwd()` throws, and such a path given as an argument
 * arrives with U+FFFD in place of the bytes and names nothing. Either is refused here, saying so,
 * rather than left to fail later as an internal error or a folder "not found".
 */
import { InputError } from "./errors.ts";

/** Why a path that is not UTF-8 is refused, and what to do. */
const NOT_UTF8 = "tern cannot work in a folder whose path is not UTF-8; rename it";

/**
 * The process's current folder.
 * @throws {InputError} when its path is not UTF-8.
 */
export function currentDir(): string {
  try {
    return Deno.cwd();
  } catch (error) {
    if (!(error instanceof Deno.errors.InvalidData)) throw error;
    throw new InputError(
      `Cannot use the current folder ${quotedPathOf(error)} as the workspace: ${NOT_UTF8} ` +
        "(or give another workspace with -C <dir>)",
    );
  }
}

/**
 * `dir` (a -C value) when nothing in it rules it out as a workspace path; whether it is a folder
 * at all is left to the command (`resolveWorkspace`), which says so in its own words.
 * @throws {InputError} when the folder's real path is not UTF-8, or `dir` does not exist and
 * holds U+FFFD, which stands for bytes that were not UTF-8.
 */
export function checkDirPath(dir: string): string {
  try {
    Deno.realPathSync(dir);
  } catch (error) {
    if (error instanceof Deno.errors.InvalidData) {
      throw new InputError(
        `Cannot use workspace "${dir}": its real path ${quotedPathOf(error)} is not UTF-8, ` +
          `and ${NOT_UTF8}`,
      );
    }
    if (error instanceof Deno.errors.NotFound && dir.includes("\uFFFD")) {
      throw new InputError(
        `Cannot use workspace "${dir}": not found ("\uFFFD" stands for bytes that are not ` +
          `UTF-8, and ${NOT_UTF8})`,
      );
    }
  }
  return dir;
}

/** The path Deno's InvalidData error quotes (bytes that are not UTF-8 as `\xE9`), quoted. */
function quotedPathOf(error: Error): string {
  const quoted = /"(.*)" is not valid UTF-8/.exec(error.message);
  return quoted === null ? "(its path cannot be shown)" : `"${quoted[1]}"`;
}
