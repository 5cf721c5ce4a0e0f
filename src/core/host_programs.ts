/**
 * The programs tern starts on the host (bash, bubblewrap, git, find, setsid, the person's own
 * MCP servers, ...), found so that none is one a sandboxed command could have put there. The
 * person's PATH may hold a folder inside the workspace (an activated `.venv/bin`, direnv's
 * `PATH_add bin`) or another folder commands may write: a command could leave a `git` or a
 * `bwrap` there for tern to start outside the sandbox. bin/tern drops only relative entries;
 * this drops, for tern's own processes, every entry that lies (as written, or by its real path)
 * in a folder commands may write, and takes no program whose real path lies in one.
 *
 * Commands in the sandbox keep the person's PATH as it was ({@linkcode personPath}): there, a
 * program of the workspace runs confined like any other command.
 */
// No imports: the processes that start with `--no-config` (the network proxy and forwarder, the
// rewind restore) load this module too, and cannot resolve an npm package.

/** Where programs are looked for when no PATH is set. */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/** Folders commands may write (as given, and their real paths). */
const guarded = new Set<string>();
/** The PATH tern started with; undefined until the first guard. */
let startPath: string | undefined;
/** Programs looked up on the guarded PATH, per search path. */
const found = new Map<string, string | null>();

/**
 * Adds `folders` (the workspace, write grants) to the folders whose programs tern never starts
 * on the host, and cuts tern's own PATH to the entries outside all of them, so that anything
 * tern starts by name, and what those programs start in turn, is found outside them. Call it
 * before starting any program for a workspace.
 */
export function guardHostPrograms(folders: readonly string[]): void {
  // A subagent's tern is given the person's PATH apart: its own was cut by its parent.
  startPath ??= readEnv("TERN_PERSON_PATH") ?? currentPath() ?? DEFAULT_PATH;
  let added = false;
  for (const folder of folders) {
    if (!isAbsolute(folder)) continue;
    for (const path of [folder, realOrSelf(folder)]) {
      if (!guarded.has(path)) {
        guarded.add(path);
        added = true;
      }
    }
  }
  if (!added) return;
  found.clear();
  try {
    Deno.env.set("PATH", hostSearchPath(startPath));
  } catch {
    // Without permission to change it, every program is still looked up by hostProgram.
  }
}

/** The PATH as tern started, for commands that run in the sandbox. */
export function personPath(): string | undefined {
  return startPath ?? readEnv("TERN_PERSON_PATH") ?? currentPath();
}

/**
 * `path` (default: tern's own PATH) cut to its absolute entries that lie, as written and by their
 * real path, outside every guarded folder. An entry that does not exist yet is judged by where its
 * deepest existing folder leads: a command could still create it.
 */
export function hostSearchPath(path?: string): string {
  const entries = (path ?? currentPath() ?? DEFAULT_PATH).split(":");
  return entries.filter((dir) => isAbsolute(dir) && !isGuarded(dir) && !isGuarded(realOrSelf(dir)))
    .join(":");
}

/**
 * `name`'s absolute path, looked up on {@linkcode hostSearchPath} of `path` (default: tern's
 * own), taking no program whose real path is in a guarded folder; `name` itself when it names a
 * path (holds a `/`) outside them. Throws `Deno.errors.NotFound` (as a spawn of a missing program
 * does) when there is none.
 */
export function hostProgram(name: string, path?: string): string {
  if (name.includes("/")) {
    if (isAbsolute(name) && !isGuarded(realOrSelf(name))) return name;
    throw new Deno.errors.NotFound(
      `Failed to spawn '${name}': a program in a folder sandboxed commands may write is never started on the host`,
    );
  }
  const search = hostSearchPath(path);
  const key = `${name}\0${search}`;
  if (!found.has(key)) found.set(key, lookUp(name, search));
  const program = found.get(key);
  if (program === null || program === undefined) {
    throw new Deno.errors.NotFound(`Failed to spawn '${name}': entity not found`);
  }
  return program;
}

/**
 * Of `names`, those {@linkcode hostProgram} finds now that it would no longer find once `folder`
 * were guarded too (every copy on the PATH lies in it), each with the folder it is found in now.
 * Guards nothing: for refusing a workspace that holds the system's programs before it is used.
 */
export function programsOnlyIn(
  folder: string,
  names: readonly string[],
): { name: string; folder: string }[] {
  const extra = [folder, realOrSelf(folder)];
  const startSearch = hostSearchPath(startPath ?? currentPath() ?? DEFAULT_PATH);
  const dirs = startSearch.split(":");
  const kept = dirs.filter((dir) => !isGuarded(dir, extra) && !isGuarded(realOrSelf(dir), extra));
  // No folder of the PATH lies in it (a project's folder): nothing to look up, on every start.
  if (kept.length === dirs.length) return [];
  const search = kept.join(":");
  const hidden: { name: string; folder: string }[] = [];
  for (const name of names) {
    const now = lookUp(name, startSearch);
    if (now === null || lookUp(name, search, extra) !== null) continue;
    hidden.push({ name, folder: now.slice(0, now.lastIndexOf("/")) || "/" });
  }
  return hidden;
}

/**
 * {@linkcode hostProgram}, or where `name` is usually installed (`/usr/bin/<name>`) when it is not
 * found: for a path written into a script or a command line, which then fails as a program that
 * is not installed instead of being looked up on a PATH that may hold the workspace's.
 */
export function hostProgramOr(name: string): string {
  try {
    return hostProgram(name);
  } catch {
    return `/usr/bin/${name}`;
  }
}

function lookUp(name: string, search: string, extra: readonly string[] = []): string | null {
  for (const dir of search.split(":")) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      const info = Deno.statSync(candidate);
      if (!info.isFile || ((info.mode ?? 0o111) & 0o111) === 0) continue;
      if (isGuarded(realOrSelf(candidate), extra)) continue;
      return candidate;
    } catch {
      // Not there.
    }
  }
  return null;
}

/** Whether `path` lies in a guarded folder, or in one of `extra`. */
function isGuarded(path: string, extra: readonly string[] = []): boolean {
  const clean = normal(path);
  for (const folder of [...guarded, ...extra]) {
    const dir = normal(folder);
    if (clean === dir || clean.startsWith(dir === "/" ? "/" : `${dir}/`)) return true;
  }
  return false;
}

/** `path` without `.` parts, repeated or trailing slashes; `..` parts are resolved. */
function normal(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

function join(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

/**
 * `path`'s real path; for a path that does not exist (yet), the real path of its deepest
 * existing folder with the rest added back: `link/bin` with `link` leading into the workspace is
 * judged there even before a command makes `bin`.
 */
function realOrSelf(path: string): string {
  const parts = normal(path).split("/").filter((part) => part !== "");
  for (let keep = parts.length; keep >= 0; keep--) {
    try {
      const real = Deno.realPathSync(`/${parts.slice(0, keep).join("/")}`);
      const rest = parts.slice(keep);
      return rest.length === 0 ? real : join(real, rest.join("/"));
    } catch {
      // Not there (yet): try the folder above.
    }
  }
  return path;
}

function currentPath(): string | undefined {
  return readEnv("PATH");
}

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
