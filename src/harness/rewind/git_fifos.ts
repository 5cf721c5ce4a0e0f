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
import { findFifos } from "../../core/fifo_search.ts";
import { relative } from "../../core/path.ts";

export { FIFO_CHECK_MS, isFifo } from "../../core/fifo_search.ts";

/** More FIFOs than this are not released (a shell loop each): git is not run. */
export const MAX_FIFOS = 64;

/**
 * The FIFOs named `.gitignore` or `.gitattributes` under `workspace` (an absolute real path),
 * as absolute paths (see findFifos). Never throws.
 */
export function findGitFifos(workspace: string, path: string): Promise<string[]> {
  return findFifos(workspace, [".gitignore", ".gitattributes"], path);
}

/** Why git cannot run with `fifo` (absolute) in `workspace`, as an error says it. */
export function waitsOnFifo(workspace: string, fifo: string): string {
  return `"${relative(workspace, fifo)}" is a FIFO, which git would wait on for ever (it ` +
    "reads every .gitignore and .gitattributes); remove it";
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
