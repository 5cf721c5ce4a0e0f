/**
 * Host files only root may read. bubblewrap drops every capability, so a command running as
 * uid 0 cannot read other users' private files; but it still owns root's own, and a root-only
 * file (`/etc/shadow`, ssh host keys, `/root`, `/var/lib/docker`, kubeconfigs in `/etc`) is
 * readable by its owner without any capability. Running commands as another uid would make the
 * workspace (owned by root) unwritable, and a user namespace maps uid 0 inside to uid 0 outside,
 * so these are found by their mode and hidden instead.
 */
import { join } from "../core/path.ts";

/**
 * Top-level folders not searched: the system's programs and libraries (readable by everyone by
 * design, and large), package stores of the same kind, and what a sandbox replaces or is not
 * files on disk. Every other top-level folder (`/etc`, `/root`, `/home`, `/var`, `/opt`, `/srv`,
 * a container's `/data` or `/app`) may hold host configuration, state or people's files.
 */
const NOT_SEARCHED: ReadonlySet<string> = new Set([
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/nix",
  "/snap",
  "/proc",
  "/sys",
  "/dev",
  "/run",
  "/tmp",
]);

/** Searched besides the top-level folders: the one configuration folder under `/usr`. */
const ALSO_SEARCHED: readonly string[] = ["/usr/local/etc"];

/**
 * The paths searched for root-only files: each entry of `/` (folder or file, not a symlink)
 * but those in {@linkcode NOT_SEARCHED}, then `/usr/local/etc`. `top` names the entries of `/`
 * (read now when not given). Sorted.
 */
export function searchedRoots(top?: readonly string[]): string[] {
  let names = top;
  if (names === undefined) {
    try {
      names = [...Deno.readDirSync("/")].filter((entry) => !entry.isSymlink).map((e) => e.name);
    } catch {
      names = ["etc", "root", "home", "var", "opt", "srv", "boot", "mnt", "media"];
    }
  }
  const roots = names.map((name) => `/${name}`).filter((path) => !NOT_SEARCHED.has(path));
  return [...roots.sort(), ...ALSO_SEARCHED];
}

/** Not searched: large, world-readable by design, or not files at all. */
const SKIPPED: ReadonlySet<string> = new Set([
  "/var/lib/dpkg/info",
  "/var/cache/apt/archives",
  "/var/lib/apt/lists",
  "/var/run",
  // Temporary folders come and go: one gone between the search and a command's start would
  // make bubblewrap fail (it cannot mount on what is not there).
  "/var/tmp",
  "/var/lock",
]);

/** Options for {@linkcode rootOnlyPaths}. */
export interface RootOnlyOptions {
  /** The folders to search; default {@linkcode searchedRoots}. */
  roots?: readonly string[];
  /** Folder levels below each root searched; default 4. */
  maxDepth?: number;
  /** Entries looked at in total before the search stops; default 30,000. */
  maxEntries?: number;
  /** The uid and gid whose private files count; default this process's. */
  uid?: number;
  gid?: number;
}

/**
 * The paths under the host's configuration and state folders that this uid or gid may read
 * but others may not: files without the world-read bit, folders without world read or search,
 * owned by `uid`, or by group `gid` with group access. A folder found is not entered (hiding it
 * hides everything below). Breadth-first, not following symlinks, bounded by `maxEntries` and
 * `maxDepth` (deeper private files are not found: a documented limit). Sorted; never throws.
 */
export function rootOnlyPaths(options: RootOnlyOptions = {}): string[] {
  const uid = options.uid ?? Deno.uid() ?? -1;
  const gid = options.gid ?? Deno.gid() ?? -1;
  const maxDepth = options.maxDepth ?? 4;
  let budget = options.maxEntries ?? 30_000;
  const found: string[] = [];
  let level: string[] = [];
  for (const root of options.roots ?? searchedRoots()) {
    const kind = privateKind(root, uid, gid);
    if (kind === "private") found.push(root);
    else if (kind === "dir") level.push(root);
  }
  for (let depth = 0; depth < maxDepth && level.length > 0 && budget > 0; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      if (SKIPPED.has(dir)) continue;
      let entries: Deno.DirEntry[];
      try {
        entries = [...Deno.readDirSync(dir)];
      } catch {
        continue;
      }
      budget -= entries.length;
      for (const entry of entries) {
        if (entry.isSymlink) continue;
        const path = join(dir, entry.name);
        const kind = privateKind(path, uid, gid);
        if (kind === "private") found.push(path);
        else if (kind === "dir") next.push(path);
      }
      if (budget <= 0) break;
    }
    level = next;
  }
  return found.sort();
}

function privateKind(path: string, uid: number, gid: number): "private" | "dir" | "other" {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return "other";
  }
  if (info.isSymlink || info.mode === null) return "other";
  const mode = info.mode;
  const worldNeeds = info.isDirectory ? 0o005 : 0o004;
  const worldCan = (mode & worldNeeds) === worldNeeds;
  const ownerCan = info.uid === uid && (mode & (worldNeeds << 6)) !== 0;
  const groupCan = info.gid === gid && (mode & (worldNeeds << 3)) !== 0;
  if (!worldCan && (ownerCan || groupCan)) return "private";
  return info.isDirectory ? "dir" : "other";
}

/** A search {@linkcode prewarmHostPrivatePaths} started that no sandbox has taken yet. */
let warm: Promise<string[]> | undefined;

/**
 * Starts {@linkcode hostPrivatePaths} now (a `find` process), for the next sandbox that opens
 * to take with {@linkcode takeWarmHostPrivatePaths}: the search then runs while tern loads the
 * sandbox's code. Does nothing while one started earlier waits to be taken.
 */
export function prewarmHostPrivatePaths(): void {
  warm ??= hostPrivatePaths();
}

/** The search {@linkcode prewarmHostPrivatePaths} started, once (later: undefined). */
export function takeWarmHostPrivatePaths(): Promise<string[]> | undefined {
  const taken = warm;
  warm = undefined;
  return taken;
}

/**
 * {@linkcode rootOnlyPaths} when this process runs as uid 0 (for any other uid, dropped
 * capabilities already keep root's files closed), none otherwise. The search runs in `find`
 * (one process, off tern's event loop, several times faster than `lstat` calls from
 * JavaScript: `bench/results/code_costs.md`), with the same folders, depth and rule; where
 * `find` cannot run, in JavaScript. A search each call: the sandbox calls it once when it
 * opens. Never throws.
 */
export async function hostPrivatePaths(): Promise<string[]> {
  if (Deno.uid() !== 0) return [];
  return await findRootOnly(0, Deno.gid() ?? 0) ?? rootOnlyPaths();
}

async function findRootOnly(uid: number, gid: number): Promise<string[] | null> {
  const mine = (bits: string) => [
    "(",
    "-user",
    String(uid),
    "-perm",
    `/u=${bits}`,
    "-o",
    "-group",
    String(gid),
    "-perm",
    `/g=${bits}`,
    ")",
  ];
  const skipped = [...SKIPPED].flatMap((path, i) =>
    i === 0 ? ["-path", path] : ["-o", "-path", path]
  );
  const args = [
    ...searchedRoots(),
    "-maxdepth",
    "4",
    "(",
    ...skipped,
    ")",
    "-prune",
    "-o",
    "(",
    "-type",
    "d",
    "!",
    "-perm",
    "-o=rx",
    ...mine("rx"),
    "-print",
    "-prune",
    ")",
    "-o",
    "(",
    "!",
    "-type",
    "d",
    "!",
    "-type",
    "l",
    "!",
    "-perm",
    "-o=r",
    ...mine("r"),
    "-print",
    ")",
  ];
  try {
    // Folders that do not exist make find report an error (and exit 1): that is no failure.
    const out = await new Deno.Command("find", {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success && text === "") return null;
    return text.split("\n").filter((line) => line !== "").sort();
  } catch {
    return null;
  }
}

/**
 * How a plan hides `paths` (from {@linkcode rootOnlyPaths}): a folder holding one of `shown`
 * (the workspace, a writable root, the home folder) is masked, so what is shown can be bound
 * back inside it; everything else is hidden.
 */
export function privateView(
  paths: readonly string[],
  shown: readonly string[],
): { masked: string[]; hidden: string[] } {
  const masked: string[] = [];
  const hidden: string[] = [];
  for (const path of paths) {
    const holds = shown.some((inner) => inner.startsWith(`${path}/`) || inner === path);
    (holds ? masked : hidden).push(path);
  }
  return { masked, hidden };
}
