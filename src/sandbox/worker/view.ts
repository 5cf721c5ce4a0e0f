/**
 * The file system the tool worker sees when it runs in bubblewrap: the shell commands' view
 * (so whatever that hides is hidden here too, and only the workspace and the granted roots are
 * writable), narrowed further to what the worker may use. Deno offers no `openat`, so the file
 * tools' checks can be raced by a concurrent rename (`renameat2(RENAME_EXCHANGE)` of a folder
 * and a symlink); in this view a race can only reach files that are there: the workspace, the
 * granted roots and what Deno needs to run. Nothing else exists in it, so a symlink to outside
 * swapped in while a tool runs leads nowhere (or to a read-only system file).
 */
import { dirname, isInside, join, resolve } from "../../core/path.ts";
import { bwrapArgvFor } from "../bwrap.ts";
import { lstatOrNull } from "../../core/verified_open.ts";
import type { Grants, ShellPlan } from "../types.ts";

/** What a program and its libraries need: no configuration, no home, no device beyond /dev's. */
export const LIBRARY_PATHS: readonly string[] = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
];

/**
 * System paths the deno executable (and a program a grant lets the worker run, such as
 * ripgrep) needs: programs and libraries, the dynamic linker's cache, time zones, name
 * resolution, CA certificates. Not `/etc` as a whole (`/etc/shadow` is readable as root).
 */
export const SYSTEM_PATHS: readonly string[] = [
  ...LIBRARY_PATHS,
  "/etc/localtime",
  "/etc/nsswitch.conf",
  "/etc/hosts",
  "/etc/resolv.conf",
  "/etc/passwd",
  "/etc/group",
  "/etc/ssl/certs",
  "/etc/ca-certificates",
  "/etc/pki/tls/certs",
];

/**
 * Folders the sandbox replaces (`/proc`, `/dev`, `/tmp` and `/run`): a grant inside one names
 * a host path the view does not show there, so it is not bound (binding it would create its
 * mount point in the private tmp folder that shell commands share).
 */
const REPLACED: readonly string[] = ["/proc", "/dev", "/tmp", "/run", "/var/run"];

/** What the worker needs besides the grants. */
export interface WorkerViewNeeds {
  /** The profile's grants (with any request_permissions added). */
  grants: Grants;
  /** The deno executable. */
  denoPath: string;
  /** Deno's cache (DENO_DIR); read-only. */
  denoDir: string;
  /** tern's source folder (deno.json, node_modules); read-only; null for bundled code. */
  sourceRoot: string | null;
  /** The permission-audit file Deno writes (it must exist): the one writable file besides. */
  auditFile?: string | null;
}

/**
 * The shell `plan` adapted to the worker: the workspace, the write grants and `auditFile`
 * writable; the `.git` and other read-only paths of `plan` inside them read-only again; what
 * `plan` hides inside them hidden, unless a grant names the hidden path or a path in it (a
 * person's grant of `~/.aws` is what lets the worker read it).
 */
export function workerPlan(plan: ShellPlan, needs: WorkerViewNeeds): ShellPlan {
  // A grant inside a writable root that the shell's plan left out is one a command replaced by
  // a link (see runtime.ts boundRoots): `--bind` would follow it, so the worker leaves it out
  // too. The others it adds (the run's tmp folder) lie where no command can write.
  const swapped = (path: string) =>
    !plan.writable.includes(path) && isInsideAny(path, plan.writable);
  const writable = unique([
    ...plan.writable,
    ...grantPaths(needs.grants.write).filter((path) =>
      !isInsideAny(path, REPLACED) && !swapped(path)
    ),
    ...(needs.auditFile ? [needs.auditFile] : []),
  ]);
  const kept = [...writable, ...readablePaths(needs)].map(realOrSelf);
  const writableReal = writable.map(realOrSelf);
  const { seccomp: _seccomp, guarded: _guarded, replaced: _replaced, ...shared } = plan;
  return {
    // No seccomp filter (it reaches bubblewrap as fd 3 from the shell launcher; the worker runs
    // tern's own code under its Deno flags), no guards (their mount points would stay in the
    // workspace while the long-lived worker runs; the file tools refuse .tern and .git) and no
    // replaced home files (the worker's view has no home folder to show them in).
    ...shared,
    writable,
    // Read grants under /tmp, shown over the private /tmp (a tmpfs: no host mount point).
    revealed: [...(plan.revealed ?? []), ...grantPaths(needs.grants.read)],
    readOnly: plan.readOnly.filter((path) => {
      const real = realOrSelf(path);
      return isInsideAny(real, writableReal) && !holdsAny(real, writableReal);
    }),
    hidden: plan.hidden.filter((path) => {
      const real = realOrSelf(path);
      return isInsideAny(real, kept) && !holdsAny(real, kept);
    }),
  };
}

/**
 * The bubblewrap argv (after `bwrap`) that runs the worker's `argv`: the argv
 * `bwrapArgvFor` builds for {@linkcode workerPlan} (namespaces, `/proc`, `/dev`, `/run`,
 * `/tmp`, the writable roots, read-only and hidden paths, and whatever else the shell's view
 * has), except that instead of all of `/` read-only the root is an empty folder holding, read-only,
 * only {@linkcode SYSTEM_PATHS}, Deno, its cache, tern's source and the read grants; it is
 * made read-only once everything is mounted. Throws Error when `bwrapArgvFor` no longer
 * starts from `--ro-bind / /`.
 */
export function workerBwrapArgv(
  plan: ShellPlan,
  needs: WorkerViewNeeds,
  argv: readonly string[],
): string[] {
  const planned = workerPlan(plan, needs);
  const args = bwrapArgvFor(planned, argv);
  const at = args.findIndex((arg, i) =>
    arg === "--ro-bind" && args[i + 1] === "/" && args[i + 2] === "/"
  );
  const chdir = args.lastIndexOf("--chdir");
  if (at === -1 || chdir === -1) {
    throw new Error("Cannot confine the tool worker: the shell's bubblewrap view changed shape");
  }
  const writable = planned.writable.map(realOrSelf);
  // Bound first, so the writable roots (mounted later) stay writable inside them.
  const visible: string[] = [];
  // `--ro-bind-try` skips what is missing, so the argv does not depend on what exists yet.
  for (const path of [...SYSTEM_PATHS, ...readablePaths(needs)]) {
    const real = realOrSelf(path);
    if (!isInsideAny(real, writable)) visible.push("--ro-bind-try", real, path);
  }
  // What Deno needs is bound again last, over anything the shell's view masks (a home folder
  // shown only in part), unless that would cover a writable root. Where the shell's view makes
  // a folder holding it read-only (tern's home, hidden, when it is the person's HOME and holds
  // Deno's cache), it is bound once before that too: bubblewrap could not make its mount point
  // in a read-only folder later.
  const shell = args.slice(at + 3, chdir);
  const again: string[] = [];
  for (const path of denoNeeds(needs)) {
    const real = realOrSelf(path);
    if (isInsideAny(real, writable) || holdsAny(real, writable)) continue;
    again.push("--ro-bind-try", real, path);
    const remount = shell.findLastIndex((arg, i) =>
      arg === "--remount-ro" && i + 1 < shell.length && isInside(shell[i + 1], path)
    );
    if (remount !== -1) shell.splice(remount, 0, "--ro-bind-try", real, path);
  }
  return [
    ...args.slice(0, at),
    ...visible,
    ...shell,
    ...again,
    ...heldBackArgs(plan.hidden, writable, readablePaths(needs).map(realOrSelf)),
    "--remount-ro",
    "/",
    ...args.slice(chdir),
  ];
}

/**
 * A folder the shell's view hides that lies in what the worker sees and holds something the
 * worker keeps: tern's home, when the workspace holds it (a workspace that is the home folder),
 * holds the worker's audit file and the session's saved tool results. {@linkcode workerPlan}
 * cannot hide it (its read-only tmpfs would cover them), and showing it would show everything in
 * it (every session of every project): so it becomes an empty tmpfs here, after the writable
 * roots are bound, with only what is kept bound back inside (the audit file writable, read
 * grants read-only), then made read-only.
 */
function heldBackArgs(
  hidden: readonly string[],
  writable: readonly string[],
  readable: readonly string[],
): string[] {
  const kept = [...writable, ...readable];
  const holders: string[] = [];
  for (const path of hidden.map(realOrSelf).sort((a, b) => a.length - b.length)) {
    // A hidden folder that is itself kept (a grant of it, a workspace that is tern's home)
    // stays shown whole, as before: only one that holds kept paths beside others is emptied.
    if (!isInsideAny(path, kept) || !holdsAny(path, kept) || kept.includes(path)) continue;
    if (holders.some((dir) => isInside(dir, path)) || !lstatOrNull(path)?.isDirectory) continue;
    holders.push(path);
  }
  const args: string[] = [];
  for (const dir of holders) {
    args.push("--tmpfs", dir);
    for (const path of writable.filter((path) => path !== dir && isInside(dir, path))) {
      args.push("--bind", path, path);
    }
    for (const path of readable.filter((path) => path !== dir && isInside(dir, path))) {
      args.push("--ro-bind-try", path, path);
    }
    args.push("--remount-ro", dir);
  }
  return args;
}

/** Paths the worker may read but not write: the read grants and {@linkcode denoNeeds}. */
function readablePaths(needs: WorkerViewNeeds): string[] {
  return unique([
    ...grantPaths(needs.grants.read).filter((path) => !isInsideAny(path, REPLACED)),
    ...denoNeeds(needs),
  ]);
}

/** Deno, its cache and tern's source (absolute). */
function denoNeeds(needs: WorkerViewNeeds): string[] {
  const paths = [needs.denoPath, needs.denoDir, ...(needs.sourceRoot ? [needs.sourceRoot] : [])];
  return paths.map((path) => resolve(path));
}

function grantPaths(grant: Grants["read"]): string[] {
  return grant === "all" ? ["/"] : grant.map((path) => resolve(path));
}

/** Whether `path` is a folder holding one of `paths` (or is one of them). */
function holdsAny(path: string, paths: readonly string[]): boolean {
  return paths.some((inner) => isInside(path, inner));
}

/** Where deno keeps its cache for `env`: DENO_DIR, else `$XDG_CACHE_HOME/deno`, else `~/.cache/deno`. */
export function denoDirOf(env: Readonly<Record<string, string | undefined>>): string | null {
  if (env.DENO_DIR) return resolve(env.DENO_DIR);
  if (env.XDG_CACHE_HOME) return join(resolve(env.XDG_CACHE_HOME), "deno");
  return env.HOME ? join(resolve(env.HOME), ".cache", "deno") : null;
}

/** The folder of `configPath` (tern's deno.json): its source tree and node_modules. */
export function sourceRootOf(configPath: string | null): string | null {
  return configPath === null ? null : dirname(configPath);
}

/** The real path of `path`, or `path` itself when it does not exist. */
function realOrSelf(path: string): string {
  return realOrNull(path) ?? resolve(path);
}

function realOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

function isInsideAny(path: string, dirs: readonly string[]): boolean {
  return dirs.some((dir) => isInside(dir, path));
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}
