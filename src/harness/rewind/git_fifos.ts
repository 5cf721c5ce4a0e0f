/**
 * FIFOs that git would wait on. git reads every folder's `.gitignore` as it lists the
 * workspace, and `.gitattributes` as it stores a file, with a plain `open()`: on a FIFO that
 * waits, with no end, for a writer. A command can make one (`mkfifo .gitignore`), so a
 * checkpoint's `git ls-files` or `update-index` would sit until its timeout at every turn.
 *
 * tern cannot keep git from opening them, nor hide them from git where its view is built
 * (bubblewrap follows links in a mount's target, which commands could swap). Instead, once such
 * FIFOs are known, git runs in the view behind a small shell that keeps one writer waiting on
 * each: git's open then meets that writer, which closes at once, and git reads an empty file.
 * In the view a link swapped in leads nowhere writable but the store, where the writer appends
 * nothing.
 */
import { join, relative } from "../../core/path.ts";
import { after } from "../../core/timer.ts";
import { readCapped } from "../../core/read_capped.ts";
import { hostProgram } from "../../core/host_programs.ts";
import { signalProcessGroup, spawnProcessGroup } from "../../sandbox/process.ts";

/** git has run this long: the workspace is searched for FIFOs it may be waiting on. */
export const FIFO_CHECK_MS = 2_000;
/** More FIFOs than this are not released (a shell loop each): git is not run. */
export const MAX_FIFOS = 64;
/** The search gives up after this long (it only reads folders). */
const FIND_TIMEOUT_MS = 20_000;

/**
 * The FIFOs named `.gitignore` or `.gitattributes` under `workspace` (an absolute real path),
 * as absolute paths, found by `find` without following links and without entering `.git`
 * folders; each checked again with lstat. Empty when `find` cannot run or fails; never throws.
 */
export async function findGitFifos(workspace: string, path: string): Promise<string[]> {
  let child: Deno.ChildProcess;
  try {
    child = spawnProcessGroup(hostProgram("find", path), {
      args: [
        "-P",
        workspace,
        "(",
        "-name",
        ".git",
        "-prune",
        ")",
        "-o",
        "(",
        "-name",
        ".gitignore",
        "-o",
        "-name",
        ".gitattributes",
        ")",
        "-type",
        "p",
        "-print0",
      ],
      cwd: "/",
      env: { PATH: path, LC_ALL: "C" },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    });
  } catch {
    return [];
  }
  const kill = () => signalProcessGroup(child.pid, "SIGKILL");
  const timer = after(FIND_TIMEOUT_MS, kill);
  try {
    const { bytes } = await readCapped(child.stdout, 1024 * 1024, kill);
    await child.status;
    const found: string[] = [];
    for (const name of new TextDecoder().decode(bytes).split("\0")) {
      const inside = relative(workspace, name);
      if (name === "" || inside.startsWith("..") || inside === "") continue;
      if (isFifo(join(workspace, inside))) found.push(join(workspace, inside));
    }
    return found;
  } catch {
    return [];
  } finally {
    timer.cancel();
    kill();
  }
}

/** Whether `path` is a FIFO itself (not through a link at its end). */
export function isFifo(path: string): boolean {
  try {
    return Deno.lstatSync(path).isFifo === true;
  } catch {
    return false;
  }
}

/**
 * `sh -c` script: for each argument before `--`, a loop that opens it to append (which waits
 * for a reader: git) and closes it at once, while it is still a FIFO; then the program after
 * `--` in its place. The loops end with the view, when that program exits.
 */
const RELEASE_SCRIPT = 'while [ "$1" != -- ]; do f=$1; ' +
  '(while [ -p "$f" ] && : >>"$f"; do :; done) & shift; done; shift; exec "$@"';

/**
 * The launcher's tail that runs the program appended after it with a writer waiting on each
 * of `fifos` (absolute paths shown in the view): `sh -c <script> sh <fifos...> --`.
 */
export function releasingFifos(sh: string, fifos: readonly string[]): string[] {
  return [sh, "-c", RELEASE_SCRIPT, "sh", ...fifos, "--"];
}
