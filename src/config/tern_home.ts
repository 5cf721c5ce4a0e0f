/**
 * Where tern keeps the person's config and sessions (`TERN_HOME`, default `~/.tern`), and the
 * checks that it can be one before anything is read from or written to it.
 */
import { dirname, join, resolve } from "../core/path.ts";
import { nonEmpty, type Variables } from "./env.ts";
import { ConfigError } from "./errors.ts";
import type { ConfigSource } from "./sources.ts";

/**
 * The user's tern directory: `TERN_HOME` when set, else `<home>/.tern` with `home` defaulting to
 * `HOME` from `env`.
 * @throws {ConfigError} when neither `TERN_HOME` nor a home directory is known, or the variable
 *   that chose it is a relative path: resolved in the folder tern starts in (the workspace), it
 *   would take the person's own config, where a project may set anything, from the repository.
 */
export function resolveTernHome(
  options: { cwd: string; env: Variables; home?: string },
): { path: string; source: ConfigSource } {
  const ternHome = nonEmpty(options.env.TERN_HOME);
  if (ternHome) {
    absoluteVariable("TERN_HOME", ternHome, "set it to an absolute path, or unset it");
    return {
      path: resolve(options.cwd, ternHome),
      source: { layer: "env", variable: "TERN_HOME" },
    };
  }
  const home = options.home ?? nonEmpty(options.env.HOME);
  if (home === undefined) {
    throw new ConfigError("Cannot locate the tern directory: set HOME or TERN_HOME", {
      key: "TERN_HOME",
    });
  }
  if (options.home === undefined) {
    absoluteVariable("HOME", home, "set HOME to your home folder, or TERN_HOME to tern's");
  }
  return { path: join(resolve(options.cwd, home), ".tern"), source: { layer: "default" } };
}

/** Throws unless `value` of the variable `name` is an absolute path (`fix` says what to do). */
function absoluteVariable(name: string, value: string, fix: string): void {
  if (value.startsWith("/")) return;
  throw new ConfigError(
    `${name} "${value}" is not an absolute path: tern's home (your config and sessions) would ` +
      `be in the folder tern starts in, where a repository could provide it; ${fix}`,
    { key: name },
  );
}

/**
 * Fails when the tern directory cannot be one: it, or a path above it, is a file; or it is not
 * there and tern would have to make it where the person may not have meant. One that cannot be
 * looked at passes: reading or writing it later says why.
 *
 * Of folders not there yet, tern makes only its default one, `.tern` in a HOME that exists (a
 * new user's first run). Anything else missing is most likely mistyped (`TERN_HOME=~/.trn`, a
 * HOME of another machine), and making it with its parents would scatter config and sessions
 * where nobody looks: refused, naming the variable and the path. A `TERN_HOME` that names
 * `<HOME>/.tern` itself counts as the default.
 * @throws {ConfigError} naming the directory and the variable that chose it.
 */
export function checkTernHome(
  home: { path: string; source: ConfigSource },
  homeFolder?: string,
): void {
  const named = home.source.layer === "env"
    ? `TERN_HOME "${home.path}"`
    : `The tern directory "${home.path}"`;
  let why: string;
  try {
    const info = Deno.statSync(home.path);
    if (info.isDirectory) return;
    why = `it is ${kindOf(info)}`;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return checkMissingHome(home, homeFolder);
    if (!(error instanceof Deno.errors.NotADirectory)) return;
    const above = fileAbove(home.path);
    why = above === undefined
      ? "a path above it is not a folder"
      : `"${above.path}" above it is ${kindOf(above.info)}`;
  }
  throw new ConfigError(`${named} must be a folder: ${why}`, { key: "TERN_HOME" });
}

/**
 * Passes for a missing tern directory tern may make (`checkTernHome()`): `.tern` in the
 * existing folder `homeFolder` (HOME, absolute).
 * @throws {ConfigError} for any other.
 */
function checkMissingHome(home: { path: string; source: ConfigSource }, homeFolder?: string) {
  const fromHome = homeFolder === undefined ? undefined : join(homeFolder, ".tern");
  if (fromHome === home.path && isFolder(dirname(fromHome))) return;
  if (home.source.layer === "env") {
    throw new ConfigError(
      `TERN_HOME "${home.path}" does not exist: tern makes no folder but ~/.tern itself, so a ` +
        `mistyped path is not made; create it (mkdir -m 700 -p "${home.path}") or correct ` +
        "TERN_HOME",
      { key: "TERN_HOME" },
    );
  }
  const folder = dirname(home.path);
  throw new ConfigError(
    `HOME "${folder}" does not exist: tern keeps its config and sessions in "${home.path}" and ` +
      "makes no home folder; set HOME to your home folder, or TERN_HOME to an existing folder " +
      "for tern",
    { key: "HOME" },
  );
}

function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** The nearest path above `path` that exists and is not a folder; undefined when none is. */
function fileAbove(path: string): { path: string; info: Deno.FileInfo } | undefined {
  for (let above = dirname(path); above !== dirname(above); above = dirname(above)) {
    try {
      const info = Deno.statSync(above);
      return info.isDirectory ? undefined : { path: above, info };
    } catch (error) {
      if (!(error instanceof Deno.errors.NotADirectory)) return undefined;
    }
  }
  return undefined;
}

function kindOf(info: Deno.FileInfo): string {
  return info.isFile ? "a file" : "a special file";
}

/**
 * The folder of the git repository that holds the folder `homeFolder` (HOME: tern's default
 * directory is its `.tern`; the nearest folder at or above it holding `.git`) when the workspace
 * `workspace` lies in that same repository or holds it (both absolute real paths), else null.
 * Such a repository, cloned as the person's home (a container's HOME that is the project),
 * would provide the person's own config: hooks that run unconfined, MCP servers, providers that
 * get the keys. A project of its own inside a home that is a repository (dotfiles) is not one.
 * Never throws.
 */
export function repositoryHoldingHome(homeFolder: string, workspace: string): string | null {
  const repository = repositoryOf(homeFolder);
  if (repository === null) return null;
  const inside = repository === workspace || repository.startsWith(`${workspace}/`) ||
    workspace === "/";
  return inside || repository === repositoryOf(workspace) ? repository : null;
}

/** The nearest folder at or above the absolute `dir` that holds a `.git`, or null. */
function repositoryOf(dir: string): string | null {
  for (let at = dir;; at = dirname(at)) {
    try {
      Deno.lstatSync(join(at, ".git"));
      return at;
    } catch {
      // None here (or not to be looked at): the folder above.
    }
    if (at === dirname(at)) return null;
  }
}
