/**
 * Finding the programs diagnostics run (checkers and language servers) so that none is the
 * repository's own: looked up on PATH outside the workspace, named by absolute real path, and
 * run with PATH cut to the folders outside the workspace (a script's `#!/usr/bin/env node`
 * finds no program of the repository's either).
 */
import { realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join, relative } from "../../core/path.ts";

/** Programs on one PATH for one workspace, each looked up once. */
export class Programs {
  #workspace: string;
  #path: string;
  #safePath: string | undefined;
  #found = new Map<string, string | undefined>();

  constructor(workspace: string, path: string) {
    this.#workspace = workspace;
    this.#path = path;
  }

  /**
   * `name`'s absolute real path on PATH, skipping relative folders and any program whose real
   * path is in the workspace (a PATH entry or a symlink leading there).
   */
  find(name: string): string | undefined {
    if (!this.#found.has(name)) this.#found.set(name, this.#lookUp(name));
    return this.#found.get(name);
  }

  /** PATH cut to its absolute folders whose real path is outside the workspace. */
  safePath(): string {
    this.#safePath ??= this.#path.split(delimiter).filter((dir) => {
      if (!isAbsolute(dir)) return false;
      try {
        return !within(this.#workspace, realpathSync(dir));
      } catch {
        return false;
      }
    }).join(delimiter);
    return this.#safePath;
  }

  /** Whether `file` exists (a real path) outside the workspace. */
  outside(file: string): string | undefined {
    try {
      const real = realpathSync(file);
      return statSync(real).isFile() && !within(this.#workspace, real) ? real : undefined;
    } catch {
      return undefined;
    }
  }

  #lookUp(name: string): string | undefined {
    for (const dir of this.#path.split(delimiter)) {
      if (!isAbsolute(dir)) continue;
      try {
        const real = realpathSync(join(dir, name));
        const stat = statSync(real);
        if (!stat.isFile() || ((stat.mode ?? 0) & 0o111) === 0) continue;
        if (!within(this.#workspace, real)) return real;
      } catch {
        // Not there.
      }
    }
    return undefined;
  }
}

/** Whether `path` is `folder` or below it (both absolute real paths). */
export function within(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}
