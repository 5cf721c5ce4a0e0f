/**
 * POSIX path functions for all of tern: import them from here, never from `node:path`. Deno
 * implements `node:path` inside its Node compatibility layer, and importing it loads that
 * layer's core (its errors, `util.inspect`, `assert`, …) into every run, a cost of about a
 * quarter of an empty script's start (bench/results/node_compat.md). These are Node's own
 * `path.posix` algorithms, as the path-browserify package carries them, with no Node module
 * behind them. `resolve()` and `relative()` read the current directory (`Deno.cwd()`) only when
 * they need it, as Node's do; they never touch the `process` global, which would load the layer
 * too. tests/cli/start_up_test.ts checks that no source file imports `node:path`.
 */
// @ts-types="@types/path-browserify"
import posix from "path-browserify";

/** The path separator. */
export const sep = "/";

/** What separates the folders of a list such as `PATH`. */
export const delimiter = ":";

/** Joins `paths` with `/` and normalizes the result (`.` for none). */
export function join(...paths: string[]): string {
  return posix.join(...paths);
}

/** The absolute path of `paths` taken in turn from the current directory, normalized. */
export function resolve(...paths: string[]): string {
  // The current directory is read only when no part is absolute, as Node's does: reading it
  // needs a permission that a confined worker may not have.
  return paths.some((path) => path.startsWith("/"))
    ? posix.resolve(...paths)
    : posix.resolve(Deno.cwd(), ...paths);
}

/** The relative path from `from` to `to` (each resolved first); `""` when they are the same. */
export function relative(from: string, to: string): string {
  return posix.relative(resolve(from), resolve(to));
}

/** `path` without its last part (`/` for the root, `.` for a bare name). */
export function dirname(path: string): string {
  return posix.dirname(path);
}

/** The last part of `path`, without `suffix` when it ends with it. */
export function basename(path: string, suffix?: string): string {
  return posix.basename(path, suffix);
}

/**
 * Whether `path` is `root` or lies below it, compared by whole parts (`/a/bc` is not inside
 * `/a/b`). Both are absolute and normalized; no link is followed.
 */
export function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Whether `path` starts at the root. */
export function isAbsolute(path: string): boolean {
  return posix.isAbsolute(path);
}

/** The extension of the last part of `path`, from its last `.` (`""` when none). */
export function extname(path: string): string {
  return posix.extname(path);
}
