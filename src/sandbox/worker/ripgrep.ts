/**
 * The ripgrep the tool worker may start. In its bubblewrap view (view.ts) the worker reaches
 * only the workspace, the granted roots and read-only system folders, so a program it starts
 * reaches no more: ripgrep searches there as the worker's own code would, several times faster
 * than grep's JavaScript engine (20 against 150 ms a call over a repository of 1,100 files). Only `rg` from a system folder is taken, one no repository, home or
 * write grant can put a program in, and only in that view (the runtime decides); the grep tool
 * starts it with fixed options (grep_ripgrep.ts: no configuration file, no `--pre`, the pattern
 * after `--regexp`, the path after `--`).
 */
import { join } from "../../core/path.ts";
import { LIBRARY_PATHS } from "./view.ts";

/**
 * The real path of the first `rg` on `path` (a PATH value) that lies in a system folder the
 * worker's view shows read-only ({@linkcode LIBRARY_PATHS}) and is an executable file; null
 * when there is none. Relative entries and programs elsewhere (a home's `~/.cargo/bin/rg`, a
 * workspace's `node_modules/.bin`) are passed over.
 */
export function systemRipgrep(path: string): string | null {
  for (const dir of path.split(":")) {
    if (!dir.startsWith("/")) continue;
    let real: string;
    let info: Deno.FileInfo;
    try {
      real = Deno.realPathSync(join(dir, "rg"));
      info = Deno.statSync(real);
    } catch {
      continue;
    }
    const inSystem = LIBRARY_PATHS.some((root) => real.startsWith(`${root}/`));
    if (inSystem && info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return real;
  }
  return null;
}
