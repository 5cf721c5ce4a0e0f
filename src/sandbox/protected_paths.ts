/**
 * Paths a shell command must not see or change: secret stores in the home folder, host sockets
 * outside `/run`, and the `.git` folders under the writable roots (hooks and config run code on
 * the host the next time someone uses git there).
 */
import { TernError } from "../core/errors.ts";
import { basename, dirname, isInside, join, resolve } from "../core/path.ts";
import { openUnchanged } from "../core/verified_open.ts";
import type { FolderListings, ListedEntry } from "./folder_listings.ts";

/** Relative to the home folder: credentials, keys and agents' sockets. */
const HOME_SECRETS: readonly string[] = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".kube",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pypirc",
  ".pgpass",
  ".my.cnf",
  ".gem/credentials",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".terraform.d/credentials.tfrc.json",
  ".vault-token",
  ".password-store",
  ".1password",
  ".colima",
  ".lima",
  ".config/gh",
  ".config/gcloud",
  ".config/hub",
  ".config/op",
  ".config/doctl",
  ".config/rclone",
  ".local/share/keyrings",
  ".tern",
  // Inside folders the home allowlist shows (see home_view.ts):
  ".config/git/credentials",
  ".cache/huggingface/token",
  ".cache/huggingface/stored_tokens",
];

/**
 * Secret locations under `home` (absolute, not checked for existence): ssh and gpg keys, cloud
 * and registry credentials, password stores, tern's own home (`~/.tern`: keys and sessions).
 */
export function secretLocations(home: string): string[] {
  return HOME_SECRETS.map((relative) => join(home, relative));
}

/** Sockets of container engines that live outside `/run` and the home folder. */
const SYSTEM_SOCKETS: readonly string[] = [
  "/var/snap/lxd/common/lxd/unix.socket",
  "/var/lib/lxd/unix.socket",
];

/**
 * Host Unix sockets named by `env` (`SSH_AUTH_SOCK`, a `unix://` `DOCKER_HOST`, the first
 * field of `GPG_AGENT_INFO`) plus well-known engine sockets outside `/run`. A read-only bind
 * does not stop `connect()`, so these must be hidden. Never throws.
 */
export function hostSocketLocations(env: Readonly<Record<string, string>>): string[] {
  const found: string[] = [];
  const add = (path: string | undefined) => {
    if (path !== undefined && path.startsWith("/") && !found.includes(path)) found.push(path);
  };
  add(env.SSH_AUTH_SOCK);
  if (env.DOCKER_HOST?.startsWith("unix://")) add(env.DOCKER_HOST.slice("unix://".length));
  add(env.GPG_AGENT_INFO?.split(":")[0]);
  for (const path of SYSTEM_SOCKETS) add(path);
  return found;
}

/**
 * The sandbox's view cannot be made to hold what it must (a folder tern cannot list, where a
 * `.git` or a denied file could be): commands are refused, with what to fix, until it can.
 */
export class SandboxViewError extends TernError {
  constructor(message: string) {
    super(message);
    this.name = "SandboxViewError";
  }
}

/** Options for {@linkcode gitDirsUnder}. */
export interface GitDirsOptions {
  /** Folder levels below each root that are searched; default 12. */
  maxDepth?: number;
  /** Directory entries looked at in total before the search stops; default 50,000. */
  maxEntries?: number;
  /**
   * Filled with the folders that exist but cannot be listed (a command's `chmod 000`): a `.git`
   * inside one is not found, so the caller hides them whole.
   */
  unlistable?: string[];
  /**
   * Filled with the folders a `.git` file points at (`gitdir:`) that do not exist but would lie
   * inside a root (`folder`, by the real path of its deepest existing folder), each with its
   * first missing part (`guard`): a command could make one there, with a config whose
   * `core.fsmonitor` runs at the person's next `git status` in the file's folder.
   */
  missing?: MissingGitDir[];
  /** Filled with the bare repositories found (they are in the result too). */
  bare?: string[];
  /**
   * What the last search with the same cache read: folders unchanged since are not read again
   * (see folder_listings.ts). The result is the same as without it.
   */
  cache?: FolderListings;
}

/** A folder a `.git` file points at that does not exist (see GitDirsOptions.missing). */
export interface MissingGitDir {
  folder: string;
  guard: string;
}

/** A folder's entries that matter to the search (folders and `.git`), and how many in all. */
interface Listing {
  count: number;
  entries: ListedEntry[];
}

/** What the search looks for in a package's folder. */
interface PackageLook {
  git: ListedEntry | null;
  hasModules: boolean;
}

/** Folders listed between two yields to the event loop. */
const LISTS_PER_YIELD = 256;

/**
 * Every `.git` under `roots` (a folder, or a file for worktrees and submodules), the roots'
 * own included and nested repositories too, and every bare repository below them, sorted. A
 * `.git` file's `gitdir:` folder (and that folder's `commondir`) is included when it lies
 * inside a root. Breadth-first, without following symlinks (a `.git` that is itself a symlink
 * is resolved to its target) and never entering a `.git` or a bare repository.
 *
 * A `node_modules` folder is searched where packages keep a repository: each package folder
 * (`<name>`, `@scope/<name>`, `.pnpm/<name@version>`) is checked for a `.git`, and its own
 * `node_modules` searched the same way, but a package's other folders are not entered: a
 * dependency tree holds tens of thousands of files, and this runs before every command.
 *
 * Bounded so a huge tree stays fast: the search stops after `maxEntries` entries or `maxDepth`
 * levels, so a repository deeper than that is not found (a documented limit). Unreadable
 * folders are skipped; never throws. Folders are listed synchronously, yielding to the event
 * loop every 256 of them.
 */
export async function gitDirsUnder(
  roots: readonly string[],
  options: GitDirsOptions = {},
): Promise<string[]> {
  const maxDepth = options.maxDepth ?? 12;
  const search = { budget: options.maxEntries ?? 50_000, listed: 0 };
  const tops = roots.map((root) => resolve(root));
  const found = new Set<string>();
  const cache = options.cache;
  cache?.begin();
  const kept = <T>(kind: string, dir: string, read: () => T | null): T | null =>
    cache === undefined ? read() : cache.read(kind, dir, read);
  // A `.git` found is looked at again every time (a `.git` file's pointer can change in place).
  const addGit = (path: string, entry: Pick<ListedEntry, "isSymlink" | "isDirectory">) => {
    const real = entry.isSymlink ? realPath(path) : path;
    if (real === null) return;
    found.add(real);
    if (entry.isDirectory) return;
    for (const linked of linkedGitDirs(real, tops)) found.add(linked);
    const missing = missingGitDir(real, tops);
    if (missing !== null) options.missing?.push(missing);
  };
  const list = async (dir: string): Promise<ListedEntry[]> => {
    if (++search.listed % LISTS_PER_YIELD === 0) await new Promise((done) => setTimeout(done, 0));
    const listing = kept("list", dir, () => listDir(dir));
    if (listing === null) {
      if (lstatOrNull(dir) !== null) options.unlistable?.push(dir);
      return [];
    }
    search.budget -= listing.count;
    return listing.entries;
  };
  const look = (pkg: string): PackageLook =>
    kept("package", pkg, () => {
      const git = lstatOrNull(join(pkg, ".git"));
      return {
        git: git === null
          ? null
          : { name: ".git", isDirectory: git.isDirectory, isSymlink: git.isSymlink },
        hasModules: lstatOrNull(join(pkg, "node_modules"))?.isDirectory === true,
      };
    })!;
  let level = [...tops];
  for (let depth = 0; depth <= maxDepth && level.length > 0 && search.budget > 0; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      const entries = await list(dir);
      // A bare repository (`HEAD`, `objects`, `refs`, as git itself looks for one): its hooks
      // and config run when someone pushes to it or runs git in it. Protected whole, not
      // entered. A root itself is not: the workspace is never read-only as a whole.
      if (depth > 0 && isBareRepository(entries)) {
        found.add(dir);
        options.bare?.push(dir);
        continue;
      }
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.name === ".git") addGit(path, entry);
        else if (entry.isDirectory && entry.name === "node_modules") {
          await packageGitDirs(path, { list, look, addGit, more: () => search.budget > 0 });
        } else if (entry.isDirectory) next.push(path);
      }
      if (search.budget <= 0) break;
    }
    level = next;
  }
  cache?.end();
  return [...found].sort();
}

/** How {@linkcode packageGitDirs} reads folders and reports what it finds. */
interface PackageSearch {
  list: (dir: string) => Promise<ListedEntry[]>;
  look: (pkg: string) => PackageLook;
  addGit: (path: string, entry: Pick<ListedEntry, "isSymlink" | "isDirectory">) => void;
  more: () => boolean;
}

/**
 * The `.git` of each package under the `node_modules` folder `modules`, and of those under
 * each package's own `node_modules`, given to `addGit`, while `more()` holds.
 */
async function packageGitDirs(
  modules: string,
  { list, look, addGit, more }: PackageSearch,
): Promise<void> {
  const folders = [modules];
  while (folders.length > 0 && more()) {
    const dir = folders.pop()!;
    for (const entry of await list(dir)) {
      // A linked package (npm link, pnpm's top level) is a symlink: not entered here.
      if (!entry.isDirectory) continue;
      const path = join(dir, entry.name);
      const grouped = entry.name.startsWith("@") || entry.name.startsWith(".");
      const packages = grouped
        ? (await list(path)).filter((inner) => inner.isDirectory).map((inner) =>
          join(path, inner.name)
        )
        : [path];
      for (const pkg of packages) {
        const { git, hasModules } = look(pkg);
        if (git !== null) addGit(join(pkg, ".git"), git);
        if (hasModules) folders.push(join(pkg, "node_modules"));
      }
    }
  }
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * The repository folders a `.git` file points at (`gitdir: <path>`, and that folder's
 * `commondir`) that lie inside `roots`, by real path; none when it is not such a file.
 */
function linkedGitDirs(file: string, roots: readonly string[]): string[] {
  const linked: string[] = [];
  const gitDir = pointer(file, /^gitdir: (.+)$/m);
  if (gitDir === null) return linked;
  linked.push(gitDir);
  const common = pointer(join(gitDir, "commondir"), /^(.+)$/m, gitDir);
  if (common !== null) linked.push(common);
  return linked.filter((path) =>
    roots.some((root) => path === root || path.startsWith(`${root}/`))
  );
}

/**
 * The folder the `.git` file `file` points at when it is missing and would lie inside `roots`
 * (the deepest folder of it that exists taken by real path, so a link cannot lead it out), with
 * its first missing part; null otherwise.
 */
function missingGitDir(file: string, roots: readonly string[]): MissingGitDir | null {
  const named = pointerText(file, /^gitdir: (.+)$/m);
  if (named === null) return null;
  const path = resolve(dirname(file), named);
  // It exists (linkedGitDirs() has it), or is a link leading nowhere, guarded as a link is.
  if (realPath(path) !== null) return null;
  const rest: string[] = [];
  for (let dir = path; dir !== "/"; dir = dirname(dir)) {
    rest.unshift(basename(dir));
    const real = realPath(dirname(dir));
    if (real === null) continue;
    const missing = { folder: join(real, ...rest), guard: join(real, rest[0]) };
    return roots.some((root) => isInside(root, real)) ? missing : null;
  }
  return null;
}

/**
 * The real path a small pointer file names (relative to `base`, default its folder). The file
 * (a link to one is followed) is read only while it is the regular file its `lstat` showed,
 * opened without blocking: a command swapping a FIFO in for it cannot make tern wait forever.
 */
function pointer(file: string, pattern: RegExp, base = dirname(file)): string | null {
  const target = pointerText(file, pattern);
  return target === null ? null : realPath(resolve(base, target));
}

/** What a small pointer file names (`pattern`'s first group), as written; null for none. */
function pointerText(file: string, pattern: RegExp): string | null {
  try {
    const real = Deno.realPathSync(file);
    const info = Deno.lstatSync(real);
    if (!info.isFile || info.size > 4096) return null;
    using opened = openUnchanged(real, info);
    if (opened === null) return null;
    return new TextDecoder().decode(opened.head(4096)).match(pattern)?.[1].trim() || null;
  } catch {
    return null;
  }
}

/** The entries git looks for in a folder to take it for a repository. */
const BARE_PARTS = new Set(["HEAD", "objects", "refs"]);

/**
 * Whether a folder with these entries is a repository to git: a `HEAD` that is not a folder,
 * `objects` and `refs` that are folders or links (git follows them).
 */
function isBareRepository(entries: readonly ListedEntry[]): boolean {
  const named = (name: string) => entries.find((entry) => entry.name === name);
  const head = named("HEAD");
  const folderLike = (entry: ListedEntry | undefined) =>
    entry !== undefined && (entry.isDirectory || entry.isSymlink);
  return head !== undefined && !head.isDirectory && folderLike(named("objects")) &&
    folderLike(named("refs"));
}

/**
 * The folders, `.git` entries and the entries that make a bare repository of `dir`, sorted,
 * and how many entries it has; null when it cannot be listed.
 */
function listDir(dir: string): Listing | null {
  const entries: ListedEntry[] = [];
  let count = 0;
  try {
    for (const { name, isDirectory, isSymlink } of Deno.readDirSync(dir)) {
      count++;
      if (isDirectory || name === ".git" || BARE_PARTS.has(name)) {
        entries.push({ name, isDirectory, isSymlink });
      }
    }
  } catch {
    return null;
  }
  // Sorted, so that which repositories a bounded search finds does not depend on disk order.
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return { count, entries };
}

function realPath(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}
