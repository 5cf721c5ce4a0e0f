/**
 * Paths a shell command must not see or change: secret stores in the home folder, host sockets
 * outside `/run`, and the `.git` folders under the writable roots (hooks and config run code on
 * the host the next time someone uses git there).
 */
import { join } from "../core/path.ts";

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

/** Options for {@linkcode gitDirsUnder}. */
export interface GitDirsOptions {
  /** Folder levels below each root that are searched; default 8. */
  maxDepth?: number;
  /** Directory entries looked at in total before the search stops; default 20,000. */
  maxEntries?: number;
}

/** Folders never searched: dependency trees hold no repositories of the user's. */
const SKIPPED = new Set(["node_modules"]);

/**
 * Every `.git` under `roots` (a folder, or a file for worktrees and submodules), the roots'
 * own included and nested repositories too, sorted. Breadth-first, without following
 * symlinks (a `.git` that is itself a symlink is resolved to its target), skipping
 * `node_modules` and never entering a `.git`. Bounded so a huge tree stays fast: the search
 * stops after `maxEntries` entries or `maxDepth` levels, so a repository deeper than that is
 * not found. Unreadable folders are skipped; never throws.
 */
export async function gitDirsUnder(
  roots: readonly string[],
  options: GitDirsOptions = {},
): Promise<string[]> {
  const maxDepth = options.maxDepth ?? 8;
  let budget = options.maxEntries ?? 20_000;
  const found = new Set<string>();
  let level = [...roots];
  for (let depth = 0; depth <= maxDepth && level.length > 0 && budget > 0; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      const entries = await listDir(dir);
      budget -= entries.length;
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.name === ".git") {
          const real = entry.isSymlink ? await realPath(path) : path;
          if (real !== null) found.add(real);
        } else if (entry.isDirectory && !SKIPPED.has(entry.name)) {
          next.push(path);
        }
      }
      if (budget <= 0) break;
    }
    level = next;
  }
  return [...found].sort();
}

async function listDir(dir: string): Promise<Deno.DirEntry[]> {
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) entries.push(entry);
  } catch {
    return [];
  }
  // Sorted, so that which repositories a bounded search finds does not depend on disk order.
  return entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

async function realPath(path: string): Promise<string | null> {
  try {
    return await Deno.realPath(path);
  } catch {
    return null;
  }
}
