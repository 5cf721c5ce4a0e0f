/**
 * The files that make up the running tern: its code, the Deno that runs it, Deno's cache and
 * the scripts that start it. Tools never change them, wherever they lie: tern loads code
 * lazily, starts parts of itself (the network proxy, the web request, a subagent through
 * bin/tern) as new processes outside bubblewrap, and the person starts it again later, so a
 * command that could rewrite one of them would run its own code as tern, outside the sandbox.
 * That matters when tern's checkout lies in a folder tools may write: the person works on
 * tern's own repository, or grants a folder that holds it.
 */
import { packaging } from "../core/packaging.ts";
import { fileUrlToPath } from "../core/file_url.ts";
import { sourceUrl } from "../core/source_url.ts";
import { join, resolve } from "../core/path.ts";
import { denoDirOf } from "./worker/view.ts";

/**
 * What of a source checkout runs as tern (relative to its root): the code (`src/`, `main.ts`,
 * the bundle and the pinned Deno in `.tools/`, the npm packages), what decides how it loads
 * and what starts it (`bin/`, `run.sh`). The rest of the checkout (tests, documents,
 * benchmarks) is ordinary workspace.
 *
 * How it loads: every file Deno 2.9 reads at the root of the main module's project, whether
 * there or not (seen with strace on `deno run main.ts`): `deno.json` (`deno.jsonc` where it is
 * missing), `deno.lock`, `package.json` (its dependencies, workspaces and module type),
 * `tsconfig.json` (compiler options) and `.npmrc` (the registry and its tokens, used when Deno
 * fetches a package). An import map or a `.env` file Deno reads only when deno.json or a flag
 * names one, and tern's names neither.
 */
export const OWN_CODE_ENTRIES: readonly string[] = [
  "src",
  "main.ts",
  "deno.json",
  "deno.jsonc",
  "deno.lock",
  "package.json",
  "tsconfig.json",
  ".npmrc",
  "node_modules",
  ".tools",
  "bin",
  "run.sh",
];

/**
 * The absolute paths of the running tern's own files (as named and by real path, not checked
 * for existence): the checkout's {@linkcode OWN_CODE_ENTRIES} when it runs from one, the file
 * of a single-file build, the Deno executable and Deno's cache (from `env`'s `DENO_DIR`,
 * `XDG_CACHE_HOME` or `HOME`).
 */
export function ownCodePaths(env: Readonly<Record<string, string | undefined>>): string[] {
  const paths: string[] = [];
  const packaged = packaging();
  if (packaged.kind === "single-file") paths.push(packaged.file);
  if (packaged.kind === "tree") {
    const root = sourceUrl("main.ts");
    if (root.protocol === "file:") {
      const dir = fileUrlToPath(new URL("./", root));
      paths.push(...OWN_CODE_ENTRIES.map((entry) => join(dir, entry)));
    }
  }
  paths.push(Deno.execPath());
  const denoDir = denoDirOf(env);
  if (denoDir !== null) paths.push(denoDir);
  const all = paths.map((path) => resolve(path));
  return [...new Set([...all, ...all.flatMap(realPathOf)])];
}

/** `[the real path of path]`, or `[]` when it cannot be resolved. */
function realPathOf(path: string): string[] {
  try {
    return [Deno.realPathSync(path)];
  } catch {
    return [];
  }
}
