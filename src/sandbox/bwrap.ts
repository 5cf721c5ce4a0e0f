/**
 * The bubblewrap command line for one shell command or one program, and a probe that tells
 * whether bubblewrap can start a sandbox on this machine at all.
 */
import { hostProgramOr } from "../core/host_programs.ts";
import { DEFAULT_LIMITS, tmpfsArgs, ulimitPrefix } from "./limits.ts";
import { isInjectingName } from "./shell_env.ts";
import { basename, dirname, isInside } from "../core/path.ts";
import { HOME_ALLOWLIST } from "./home_view.ts";
import { SandboxViewError } from "./protected_paths.ts";
import type { ShellPlan } from "./types.ts";

/** Files in `/etc` that may link into `/run` and that a command with network needs (DNS). */
const NETWORK_LINKS: readonly string[] = ["/etc/resolv.conf"];

/**
 * The `bash` argv that runs `command` with stderr merged into stdout (in the shell, so the two
 * keep their real order and bash's error messages their line numbers), after `prefix` (the
 * limits, see `ulimitPrefix`; default none).
 */
export function bashArgv(command: string, prefix = ""): string[] {
  return ["bash", "-c", `${prefix}exec 2>&1; ${command}`];
}

/**
 * The complete argv after `bwrap` that runs `command` as `plan` says, in this order:
 * 1. `--unshare-all` (plus `--share-net` when `plan.network`), `--die-with-parent
 *    --new-session --cap-drop ALL`. No environment: values on a command line can be read by
 *    every local user in `/proc/<pid>/cmdline`, so bubblewrap is started with exactly
 *    {@linkcode sandboxEnv} as its own environment (and nothing inherited), which the command
 *    gets from it;
 * 2. `/` read-only, fresh `/proc` and `/dev`: `/dev` read-only (its devices still work), with
 *    a `/dev/shm` of `plan.limits.tmpMb` MiB;
 * 3. an empty `/run` of 16 MiB (and `/var/run` unless it links to `/run`), so host sockets
 *    (docker, dbus, ssh and gpg agents) are gone, with the `/run` target of `/etc/resolv.conf`
 *    bound back when the network is shared; before the plan's own mounts, so those apply even
 *    under `/run`. Every tmpfs a command can write has a size: each takes memory, and without
 *    one could take up to half of it;
 * 4. a private tmpfs of `plan.limits.tmpMb` MiB at `/tmp` (see {@linkcode tmpfsArgs}), each
 *    writable root read-write, each `readOnly` path read-only again
 *    (after the writable roots, so it wins), each `hidden` path replaced by a read-only empty
 *    folder or by `/dev/null` (a nodev mount, so opening it fails);
 * 5. `--chdir plan.cwd -- bash -c "<limits>; exec 2>&1; <command>"` (see {@linkcode bashArgv}
 *    and {@linkcode shellPrefix}; the sandbox itself is {@linkcode bwrapArgvFor}'s).
 *
 * `readOnly` and `hidden` paths are used by their real path (bubblewrap does not mount on a
 * symlink) and skipped when they do not exist. The file system is read (synchronously) only
 * for that and to see how `/run` is laid out: the same plan on the same machine gives the same
 * argv, so `tern sandbox explain` can print exactly what starts.
 */
export function bwrapArgs(plan: ShellPlan, command: string): string[] {
  return bwrapArgvFor(plan, bashArgv(command, shellPrefix(plan)));
}

/**
 * The head of a command's `bash -c` under `plan`: the liveness check (see `LIVENESS_FD`),
 * the limits (see `ulimitPrefix`): the rlimits, and joining the run's cgroups when the plan
 * has them.
 */
export function shellPrefix(plan: Pick<ShellPlan, "limits" | "proxy">): string {
  const limits = livenessCheck() + ulimitPrefix(plan.limits ?? DEFAULT_LIMITS);
  return plan.proxy === undefined ? limits : limits + proxyWait(plan.proxy.port);
}

/**
 * Exits (137, as a kill would) when tern's liveness pipe on `LIVENESS_FD` is at end-of-file:
 * tern died while the sandbox started. `read -t 0` reads nothing; it succeeds only when data or
 * end-of-file is there, and fails on a missing descriptor (a sandbox started by hand, a
 * language server's), so the command runs. With the pipe there, a watchdog keeps it: a process
 * that waits for its end-of-file (tern gone), then kills every other process of the sandbox
 * (`kill -KILL -1` inside its pid namespace reaches all but the namespace's init, bubblewrap,
 * which then ends with its command). It is started twice removed, so bubblewrap's init, not
 * the command's shell, is its parent (a `wait` in the command does not wait for it), and it
 * kills only when that init is bubblewrap's (`/proc` is the sandbox's own). Then the
 * descriptor is closed: the command never sees it. See `LIVENESS_FD` for why the check alone
 * is not enough.
 */
function livenessCheck(): string {
  const fd = LIVENESS_FD;
  return `{ read -t 0 -u ${fd} && exit 137; } 2>/dev/null; if [ -e /proc/self/fd/${fd} ]; then ` +
    `( ( read -r -u ${fd} _; read -r _tern_init </proc/1/comm; ` +
    `[ "$_tern_init" = bwrap ] && kill -KILL -1 ) &) </dev/null >/dev/null 2>&1; ` +
    `exec ${fd}<&-; fi; `;
}

/** How long a command waits for its forwarder at most: 400 tries 5 ms apart (2 s and more). */
const PROXY_WAIT_TRIES = 400;

/**
 * Waits until the forwarder listens on `port` (a connection it relays to the proxy, which
 * drops it unanswered), so the command's first request does not find the port closed.
 */
function proxyWait(port: number): string {
  return `for _ in {1..${PROXY_WAIT_TRIES}}; do (: <>/dev/tcp/127.0.0.1/${port}) 2>/dev/null ` +
    "&& break; sleep 0.005; done; ";
}

/**
 * The complete argv after `bwrap` that runs the program `argv` (no shell) in the sandbox
 * {@linkcode bwrapArgs} builds for `plan`, ending with `--chdir plan.cwd -- ...argv`. Its
 * stdout and stderr stay apart: for a program whose stdout is a protocol (an MCP server).
 * The program gets bubblewrap's own environment: start bubblewrap with `clearEnv` and the
 * environment the program should see ({@linkcode sandboxEnv} for a shell command).
 */
export function bwrapArgvFor(plan: ShellPlan, argv: readonly string[]): string[] {
  if (argv.length === 0) throw new TypeError("Cannot build a bubblewrap command: argv is empty");
  const args = ["--unshare-all"];
  if (plan.network) args.push("--share-net");
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  args.push("--ro-bind", "/", "/", "--proc", "/proc");
  args.push(...devArgs(plan));
  args.push(...kernelArgs());
  args.push(...runArgs(plan.network));
  args.push(...maskArgs(plan));
  args.push(...limitArgs(plan));
  args.push(...revealArgs(plan));
  for (const root of unique(plan.writable)) {
    if (resolvesAsPlanned(root, plan.writableReal?.[root])) args.push("--bind", root, root);
  }
  const home = plan.guarded === undefined ? null : readOnlyHome(plan);
  if (home !== null) args.push(...homeTopArgs(plan, home));
  for (const path of protectedPaths(plan)) args.push("--ro-bind", path, path);
  args.push(...guardArgs(plan.guarded ?? [], home));
  args.push(...replaceArgs(plan.replaced ?? {}));
  args.push(...hideArgs(hiddenStillVisible(plan).filter((path) => stillPinned(plan, path))));
  args.push(...remountArgs(plan));
  args.push(...seccompArgs(plan));
  if (plan.proxy !== undefined && !plan.network) args.push("--info-fd", String(INFO_FD));
  args.push("--chdir", plan.cwd, "--", ...argv);
  return args;
}

/**
 * True when `root` still has the real path `planned` (or none was recorded, or it is gone):
 * `--bind` follows links, so a root a command replaced by a link would bind the link's target
 * read-write.
 */
function resolvesAsPlanned(root: string, planned: string | undefined): boolean {
  if (planned === undefined) return true;
  try {
    return Deno.realPathSync(root) === planned;
  } catch {
    return true;
  }
}

/**
 * The writable kernel interfaces under `/proc`, bound read-only (the list Docker and OCI
 * runtimes use). As uid 0 a command owns `/proc/sys` files even without capabilities: some
 * (`vm/drop_caches`, `kernel/*`) check only the owner, and bubblewrap covers `/proc/sys` only
 * when it judges it writable. `/sys` is read-only already (under `/`).
 */
export const KERNEL_WRITABLE: readonly string[] = [
  "/proc/sys",
  "/proc/sysrq-trigger",
  "/proc/irq",
  "/proc/bus",
  "/proc/fs",
  "/proc/acpi",
  "/proc/scsi",
];

function kernelArgs(): string[] {
  return KERNEL_WRITABLE.flatMap((path) => ["--ro-bind-try", path, path]);
}

/**
 * Each masked folder becomes an empty tmpfs, then each `visible` path inside one is bound back
 * read-only (a symlink is recreated as a symlink, and its target bound too when that is masked
 * as well). The writable roots come after, so they are bound back even inside a masked folder.
 */
function maskArgs(plan: ShellPlan): string[] {
  const masked = maskedDirs(plan);
  if (masked.length === 0) return [];
  const args: string[] = [];
  for (const dir of masked) args.push("--tmpfs", dir);
  const inMasked = (path: string) => masked.some((dir) => isInside(dir, path) && path !== dir);
  const bound = new Set<string>();
  for (const path of plan.visible ?? []) {
    let link: string | null = null;
    let real: string;
    try {
      if (Deno.lstatSync(path).isSymlink) link = Deno.readLinkSync(path);
      real = Deno.realPathSync(path);
    } catch {
      continue; // Absent or dangling: nothing to show.
    }
    if (link !== null && inMasked(path)) args.push("--symlink", link, path);
    if (inMasked(real) && !bound.has(real)) {
      args.push("--ro-bind", real, real);
      bound.add(real);
    }
  }
  return args;
}

/**
 * An empty read-only folder over each guarded path that is absent or an empty folder, so a
 * command cannot create it (and cannot fill one another command's guard left behind). Throws
 * SandboxViewError when a guarded path is a link: a mount follows it to its target, and the
 * link's own name stays an entry of the writable root, which a command could replace by a
 * folder of its own.
 */
function guardArgs(paths: readonly string[], readOnlyHome: string | null): string[] {
  const args: string[] = [];
  for (const path of unique(paths)) {
    // In a read-only home (see homeTopArgs) no command can replace the link.
    if (realPathOrNull(dirname(path)) !== readOnlyHome) refuseLinkedGuard(path);
    if (isAbsentOrEmptyDir(path)) args.push("--tmpfs", path, "--remount-ro", path);
  }
  return args;
}

function refuseLinkedGuard(path: string): void {
  let target: string;
  try {
    target = Deno.readLinkSync(path);
  } catch {
    return; // Not a link (or nothing there): the guard or the read-only bind holds it.
  }
  const name = basename(path);
  const instead = name === ".git"
    ? `a file holding "gitdir: <folder>" (git follows it, and tern keeps both read-only)`
    : "the folder it leads to";
  const link = `"${name}" in "${dirname(path)}"`;
  throw new SandboxViewError(
    `Cannot protect ${link}: it is a link (to ${JSON.stringify(target)}), which a command ` +
      `could replace by a folder of its own. Replace the link by ${instead}; commands wait ` +
      "until then",
  );
}

/**
 * Where the workspace holds the home folder (tern run in `~` or above it): the home folder
 * read-only with its entries bound back writable, but those starting with "." and
 * {@linkcode HOME_PROGRAMS}. Its shell start-up files, `.gitconfig`, `.local/bin`, `.config`
 * (autostart, systemd units), `~/bin` and `~/go/bin` run code on the host later, and a command
 * could otherwise edit them, replace a link to them, or create one that is missing
 * (`.bash_login`); a workspace inside the home never reaches them. Like the guards, for commands only: the file tools name their paths
 * to the policy, and the person sees them.
 */
function homeTopArgs(plan: ShellPlan, home: string): string[] {
  const args = ["--ro-bind", home, home];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(home)];
  } catch {
    return args; // Unlistable: all of it read-only.
  }
  for (const entry of entries) {
    // A name that is not UTF-8 cannot be named to bubblewrap: it stays read-only.
    if (entry.name.startsWith(".") || HOME_PROGRAMS.has(entry.name) || entry.isSymlink) continue;
    if (entry.name.includes("\uFFFD")) continue;
    args.push("--bind", `${home}/${entry.name}`, `${home}/${entry.name}`);
  }
  // Write grants inside the home (a person's own, such as `~/.npm`) stay writable.
  for (const root of unique(plan.writable)) {
    const real = realPathOrNull(root);
    if (real === null || real === home || !isInside(home, real)) continue;
    if (resolvesAsPlanned(root, plan.writableReal?.[root])) args.push("--bind", root, root);
  }
  return args;
}

/**
 * The home's entries without a leading "." that hold programs found on the host's PATH: `bin`
 * and the toolchain folders of the home allowlist (`go`), read-only as in any other view.
 */
const HOME_PROGRAMS: ReadonlySet<string> = new Set([
  "bin",
  ...HOME_ALLOWLIST.map((entry) => entry.path.split("/")[0]).filter((top) => !top.startsWith(".")),
]);

/**
 * The home's real path when the workspace holds it (see homeTopArgs), else null. A write grant
 * of the home folder itself is the person's own choice, kept as they made it.
 */
function readOnlyHome(plan: ShellPlan): string | null {
  const home = plan.env.HOME === undefined ? null : realPathOrNull(plan.env.HOME);
  if (home === null || home === "/" || isInside("/tmp", home)) return null;
  const workspace = realPathOrNull(plan.cwd);
  return workspace !== null && plan.writable.includes(plan.cwd) && isInside(workspace, home)
    ? home
    : null;
}

/** True when nothing is at `path`, or an empty folder (not a link). */
export function isAbsentOrEmptyDir(path: string): boolean {
  try {
    if (!Deno.lstatSync(path).isDirectory) return false;
    for (const _ of Deno.readDirSync(path)) return false;
    return true;
  } catch (error) {
    return error instanceof Deno.errors.NotFound;
  }
}

/** The masked folders made read-only, last, after everything inside them is mounted. */
function remountArgs(plan: ShellPlan): string[] {
  return maskedDirs(plan).flatMap((dir) => ["--remount-ro", dir]);
}

/**
 * The masked folders that exist, outer before inner (an outer tmpfs would cover an inner one),
 * without those under `/tmp`: the private `/tmp` replaces all of the host's.
 */
function maskedDirs(plan: ShellPlan): string[] {
  // A folder inside a writable root is not masked: the root's bind covers it, and remounting
  // the mask read-only at the end would make that part of the root read-only.
  const roots = realPaths(plan.writable);
  return realPaths(plan.masked ?? [])
    .filter((dir) => !isInside("/tmp", dir) && kindOf(dir) === "dir")
    .filter((dir) => !roots.some((root) => isInside(root, dir)))
    .sort((a, b) => a.length - b.length);
}

/**
 * `--ro-bind-try` of each of `plan.revealed` under `/tmp` that no writable root holds, by its
 * real path where it exists (so the argv does not depend on whether it exists yet: `tern
 * sandbox explain` shows what a run starts, and bubblewrap skips what is missing).
 */
function revealArgs(plan: ShellPlan): string[] {
  const roots = realPaths(plan.writable);
  const real = (path: string) => realPaths([path])[0] ?? path;
  return unique((plan.revealed ?? []).map(real))
    .filter((path) => path !== "/tmp" && isInside("/tmp", path))
    .filter((path) => !roots.some((root) => isInside(root, path)))
    .flatMap((path) => ["--ro-bind-try", path, path]);
}

/**
 * The real paths of `plan.readOnly` inside a writable root (by the roots' real paths too), and
 * of those in `plan.pinned` only while each is still its own real path. What is outside every
 * writable root is read-only or masked already: a path that leads there now (a nested `.git`
 * that is a link to a home file, a protected file a command swapped for a link since the plan
 * was made) is never bound, as binding it would show what the view masks.
 */
function protectedPaths(plan: ShellPlan): string[] {
  const roots = unique([...plan.writable, ...realPaths(plan.writable)]);
  // A guarded path that is absent or an empty folder gets the guard's empty read-only folder
  // (`guardArgs`), not a bind: another tern sharing the workspace may remove its mount point
  // between the plan and bubblewrap's start, and a bind of it would then fail the command.
  const guarded = (path: string) => plan.guarded?.includes(path) && isAbsentOrEmptyDir(path);
  for (const path of plan.readOnly) {
    const repository = basename(path) === ".git" || plan.bareRepositories?.includes(path);
    if (repository && !plan.guarded?.includes(path)) refuseMovedRepository(path, roots);
  }
  return realPaths(plan.readOnly.filter((path) => stillPinned(plan, path) && !guarded(path)))
    .filter((path) => roots.some((root) => isInside(root, path)));
}

/**
 * Throws SandboxViewError when `path`, a `.git` or bare repository the search found inside a
 * writable root, is gone: its repository may have moved with a folder above it (a background
 * process renamed `sub` while only `sub/.git` was a mount point), and nothing says where, so no
 * view made without it may start.
 */
function refuseMovedRepository(path: string, roots: readonly string[]): void {
  if (!roots.some((root) => isInside(root, path))) return;
  // A writable root's own `.git` is the guard's (`guardArgs`): gone, it cannot be made again,
  // and the guard's mount point, which tern removes once no command runs, is one of those.
  if (roots.includes(dirname(path))) return;
  try {
    Deno.lstatSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return;
    throw new SandboxViewError(
      `Cannot protect the repository "${path}": it moved or was removed after the sandbox's ` +
        "view was made (a background process may have renamed a folder above it). Its new " +
        "place is found when the view is made again: run the command again",
    );
  }
}

/**
 * False for a path of `plan.pinned` that is gone or no longer its own real path (see
 * ShellPlan). Any other failure to resolve it keeps it: bubblewrap then fails to start, and the
 * command with it, rather than run without the mount.
 */
function stillPinned(plan: Pick<ShellPlan, "pinned">, path: string): boolean {
  if (!plan.pinned?.includes(path)) return true;
  try {
    return Deno.realPathSync(path) === path;
  } catch (error) {
    return !(error instanceof Deno.errors.NotFound);
  }
}

/**
 * The identity (device and inode) of each file {@linkcode bwrapArgvFor} hides for `plan`, in
 * order. A hidden file is a mount over one directory entry: when the host replaces the file
 * by a rename (how editors and `passwd` save), a sandbox opened before sees the new file, so
 * a kept sandbox (the warm shell) must not be reused once one of these changed.
 */
export function hiddenFileIds(plan: ShellPlan): string[] {
  const ids: string[] = [];
  for (const path of realPaths(hiddenStillVisible(plan))) {
    // Gone: nothing is mounted there.
    const info = statOrNull(path);
    if (info !== null && !info.isDirectory) ids.push(`${info.dev}:${info.ino}`);
  }
  return ids;
}

/**
 * `fn()`, with each path's real path and `stat` looked up once however often `fn` asks:
 * building a warm shell's key (before every command) resolves the same hidden and writable
 * paths several times over. Only for a synchronous `fn`, so the answers are of one moment.
 */
export function withPathLookups<T>(fn: () => T): T {
  if (lookups !== undefined) return fn();
  lookups = { real: new Map(), stat: new Map() };
  try {
    return fn();
  } finally {
    lookups = undefined;
  }
}

/** The lookups of the `withPathLookups()` under way, if any. */
let lookups: {
  real: Map<string, string | null>;
  stat: Map<string, Deno.FileInfo | null>;
} | undefined;

function realPathOrNull(path: string): string | null {
  const known = lookups?.real.get(path);
  if (known !== undefined) return known;
  let real: string | null = null;
  try {
    real = Deno.realPathSync(path);
  } catch {
    // Absent, a dangling link or unreadable.
  }
  lookups?.real.set(path, real);
  return real;
}

function statOrNull(path: string): Deno.FileInfo | null {
  const known = lookups?.stat.get(path);
  if (known !== undefined) return known;
  let info: Deno.FileInfo | null = null;
  try {
    info = Deno.statSync(path);
  } catch {
    // Absent, a dangling link or unreadable.
  }
  lookups?.stat.set(path, info);
  return info;
}

/** `hidden` without the paths a masked folder hides already (unless bound back inside it). */
function hiddenStillVisible(plan: ShellPlan): string[] {
  const masked = realPaths(plan.masked ?? []);
  if (masked.length === 0) return [...plan.hidden];
  const shown = [...plan.writable, ...(plan.visible ?? [])];
  return plan.hidden.filter((path) =>
    !masked.some((dir) => isInside(dir, path)) || shown.some((root) => isInside(root, path))
  );
}

/** Where bubblewrap reads the seccomp filter: fd 3, which {@linkcode launchArgv} opens. */
export const SECCOMP_FD = 3;

function seccompArgs(plan: ShellPlan): string[] {
  return plan.seccomp === undefined ? [] : ["--seccomp", String(SECCOMP_FD)];
}

/**
 * Where a command's shell finds tern's liveness pipe (the launcher's stdin, which tern holds
 * open and never writes to; the command's own stdin is `/dev/null`). bubblewrap's
 * `--die-with-parent` cannot cover a tern that dies while a sandbox starts: the outer
 * bubblewrap arms it only after its clone, and the sandbox's init only once it has started the
 * command (bubblewrap's `do_init`), so a death in between leaves a sandbox whose parent is
 * already gone, with the command running in it (seen here when tern was killed a few
 * milliseconds after it started a background process). The shell's first step (see
 * {@linkcode shellPrefix}) is to exit when the pipe has reached end-of-file, and to leave a
 * watchdog on it that ends the sandbox when tern dies later.
 */
export const LIVENESS_FD = 9;

/**
 * The script that starts bubblewrap: it closes every file descriptor above 2 it inherited
 * (tern may have been started holding some: a directory or a socket of the host would pass
 * through bubblewrap into the sandbox, and `/proc/self/fd/N` reaches past every mount), for a
 * shell command moves stdin (tern's liveness pipe) to `LIVENESS_FD`, then opens the seccomp
 * filter as fd 3 and execs bubblewrap, which reads and closes it. (An MCP server's stdin is
 * its protocol: it stays.)
 */
const LAUNCHER_HEAD = "f=$1; shift; for p in /proc/$$/fd/*; do n=${p##*/}; " +
  'if [ "$n" -gt 2 ]; then exec {n}>&-; fi; done; ';

/** The launcher's last step: bubblewrap, with the seccomp filter as fd 3 when there is one. */
const LAUNCHER_EXEC = 'if [ -n "$f" ]; then exec "$@" 3<"$f"; else exec "$@"; fi';

/** Moves stdin (tern's liveness pipe) to `LIVENESS_FD`; the command's stdin is `/dev/null`. */
const MOVE_LIVENESS = `exec ${LIVENESS_FD}<&0 </dev/null; `;

/**
 * `/dev` of a command with host grants: what `--dev` gives but `/dev/pts`. Mounting a devpts
 * makes an unprivileged bubblewrap map root in a first user namespace and nest a second one
 * for the command, and the network namespace then belongs to the first, which no process is
 * left in for the forwarder to join (`nsenter` has no way to its parent before util-linux
 * 2.39). Without it there is one user namespace, the forwarder's way in.
 */
const PROXIED_DEV: readonly string[] = [
  "--tmpfs",
  "/dev",
  ...["null", "zero", "full", "random", "urandom", "tty"].flatMap((name) => [
    "--dev-bind",
    `/dev/${name}`,
    `/dev/${name}`,
  ]),
  ...["--symlink", "/proc/self/fd", "/dev/fd"],
  ...["--symlink", "/proc/self/fd/0", "/dev/stdin"],
  ...["--symlink", "/proc/self/fd/1", "/dev/stdout"],
  ...["--symlink", "/proc/self/fd/2", "/dev/stderr"],
];

/** Size of the empty `/run` and `/var/run`: sockets and pid files, nothing large. */
const RUN_BYTES = 16 * 1024 * 1024;
/** Size of the `/dev` of {@linkcode PROXIED_DEV}: only mount points for the devices. */
const DEV_BYTES = 1024 * 1024;

/**
 * A fresh `/dev` (`--dev`, or {@linkcode PROXIED_DEV} for a command with host grants), with a
 * `/dev/shm` of `limits.tmpMb` MiB, writable by all as usual (shared memory is files there),
 * then made read-only: the devices in it still read and write, but no file can be made beside
 * them, so `/dev` cannot fill memory either.
 */
function devArgs(plan: ShellPlan): string[] {
  const shmBytes = (plan.limits ?? DEFAULT_LIMITS).tmpMb * 1024 * 1024;
  const dev = plan.proxy !== undefined && !plan.network
    ? ["--size", String(DEV_BYTES), ...PROXIED_DEV]
    : ["--dev", "/dev"];
  return [
    ...dev,
    ...["--perms", "01777", "--size", String(Math.floor(shmBytes)), "--tmpfs", "/dev/shm"],
    ...["--remount-ro", "/dev"],
  ];
}

/** Where bubblewrap writes the sandbox's pid (`--info-fd`) for the forwarder's launcher. */
export const INFO_FD = 4;

/**
 * The launcher of a command with host grants: as `LAUNCHER_HEAD`, and before bubblewrap starts, a
 * reader on fd 4 (bubblewrap's `--info-fd`) waits for the sandbox's pid, then enters only its
 * network namespace (and, not as root, its user namespace, which owns it) with `nsenter` and
 * starts the forwarder there: outside the sandbox's mounts, pid namespace and seccomp filter,
 * with the launcher's process group (tern kills what is left of the group when bubblewrap
 * exits). The reader reads to the end (bubblewrap closes fd 4 once it wrote): closing it
 * earlier would kill bubblewrap with SIGPIPE in the middle of its writes. bubblewrap closes
 * fd 4 in the sandbox, so the command cannot write a pid there.
 */
const PROXY_LAUNCHER_HEAD = 'f=$1; k=$2; shift 2; fwd=("${@:1:k}"); shift "$k"; ' +
  "for p in /proc/$$/fd/*; do n=${p##*/}; " +
  'if [ "$n" -gt 2 ]; then exec {n}>&-; fi; done; ' +
  `re='"child-pid": *([0-9]+)'; ` +
  "exec 4> >(pid=; while read -r l; do " +
  "if [[ $l =~ $re ]]; then pid=${BASH_REMATCH[1]}; fi; done; " +
  '[ -n "$pid" ] || exit 0; if [ "$EUID" = 0 ]; then ns=(-n); ' +
  "else ns=(-U --preserve-credentials -n); fi; " +
  'exec "${fwd[0]}" -t "$pid" "${ns[@]}" -- "${fwd[@]:1}" </dev/null >/dev/null 2>&1); ';

/**
 * The program and arguments that start bubblewrap with `args` (from {@linkcode bwrapArgs} or
 * {@linkcode bwrapArgvFor}) for `plan`: `bash -c <launcher> tern-sandbox <filter> <bwrap>
 * ...args`, see `LAUNCHER_HEAD`; with `options.liveness` (a shell command started with a
 * liveness pipe as stdin, see `LIVENESS_FD`) the launcher moves stdin there. One bash start (about a millisecond) per command. With
 * `plan.proxy` (and no shared network), `bash -c <proxy launcher> tern-sandbox <filter>
 * <count> <forwarder...> <bwrap> ...args`, which also starts the forwarder (see
 * `PROXY_LAUNCHER_HEAD`).
 */
export function launchArgv(
  plan:
    & Pick<ShellPlan, "seccomp">
    & Partial<Pick<ShellPlan, "proxy" | "network" | "cgroupFiles" | "limits">>,
  args: readonly string[],
  bwrapPath = bwrapProgram(),
  options: { liveness?: boolean } = {},
): { program: string; args: string[] } {
  const filter = plan.seccomp ?? "";
  const tail = (options.liveness ? MOVE_LIVENESS : "") + LAUNCHER_EXEC;
  const head = launcherLimits(plan);
  if (plan.proxy !== undefined && !plan.network) {
    const fwd = plan.proxy.forwarder;
    return {
      program: "bash",
      args: [
        "-c",
        head + PROXY_LAUNCHER_HEAD + tail,
        "tern-sandbox",
        filter,
        // nsenter by its absolute path, then the forwarder: nothing the launcher starts is looked
        // up on the command's PATH.
        String(fwd.length + 1),
        hostProgramOr("nsenter"),
        ...fwd,
        bwrapPath,
        ...args,
      ],
    };
  }
  return {
    program: "bash",
    args: ["-c", head + LAUNCHER_HEAD + tail, "tern-sandbox", filter, bwrapPath, ...args],
  };
}

/**
 * The launcher's first step, before anything of the sandbox exists: it joins the run's cgroups
 * (`plan.cgroupFiles`, see run_cgroup.ts) and sets the memory, CPU-time and file-size rlimits
 * of `plan.limits`, so that bubblewrap, its init and every process of the sandbox (the liveness
 * watchdog, a command's shell before its own head runs) are born inside both. A process there
 * that a command takes over (through `/proc/<pid>/mem`, as the same user) has nothing more. The
 * process cap (RLIMIT_NPROC) stays with the command's shell inside the user namespace: out here
 * it would count every process of the person's user. Builtins only.
 */
function launcherLimits(plan: Partial<Pick<ShellPlan, "cgroupFiles" | "limits">>): string {
  if (plan.cgroupFiles === undefined && plan.limits === undefined) return "";
  const limits = plan.limits ?? DEFAULT_LIMITS;
  return ulimitPrefix(limits, { processes: false, cgroupFiles: plan.cgroupFiles });
}

/**
 * The environment to start bubblewrap with for a shell command under `plan`: `plan.env`
 * without the names that turn programs into code runners (see `isInjectingName`).
 */
export function sandboxEnv(plan: Pick<ShellPlan, "env">): Record<string, string> {
  return Object.fromEntries(Object.entries(plan.env).filter(([name]) => !isInjectingName(name)));
}

/** The private `/tmp`, a mount of its own. */
function limitArgs(plan: ShellPlan): string[] {
  return tmpfsArgs(plan.limits ?? DEFAULT_LIMITS);
}

function runArgs(network: boolean): string[] {
  const args: string[] = [];
  const size = ["--size", String(RUN_BYTES)];
  if (kindOf("/run") === "dir") args.push(...size, "--tmpfs", "/run");
  if (isRealDir("/var/run")) args.push(...size, "--tmpfs", "/var/run");
  if (network) {
    for (const target of runTargets(NETWORK_LINKS)) args.push("--ro-bind", target, target);
  }
  return args;
}

/**
 * The real paths of those `links` that are symbolic links resolving into `/run` or `/var/run`
 * (`/etc/resolv.conf` under systemd-resolved), which an empty `/run` would break. Never throws.
 */
export function runTargets(links: readonly string[]): string[] {
  const targets: string[] = [];
  for (const link of links) {
    try {
      if (!Deno.lstatSync(link).isSymlink) continue;
      const target = Deno.realPathSync(link);
      const inRun = ["/run", "/var/run"].some((dir) => isInside(dir, target));
      if (inRun && !targets.includes(target)) targets.push(target);
    } catch {
      // A dangling link or an unreadable path: nothing to keep.
    }
  }
  return targets;
}

/**
 * `--ro-bind <copy> <path>` for each file of `replaced` that is still a file at that path (not a
 * link), before the hidden paths, whose mounts win over these. A copy gone meanwhile (another
 * run sharing tern's home made a newer one) hides the file: never the file itself.
 */
function replaceArgs(replaced: Readonly<Record<string, string>>): string[] {
  return Object.entries(replaced).flatMap(([path, copy]) =>
    isRealFile(path) ? ["--ro-bind", isRealFile(copy) ? copy : "/dev/null", path] : []
  );
}

function hideArgs(paths: readonly string[]): string[] {
  const args: string[] = [];
  const hiddenDirs: string[] = [];
  for (const path of realPaths(paths)) {
    // Inside a folder hidden already: nothing to hide, and its read-only tmpfs takes no mounts.
    if (hiddenDirs.some((dir) => isInside(dir, path))) continue;
    const kind = kindOf(path);
    if (kind === "dir") {
      args.push("--tmpfs", path, "--remount-ro", path);
      hiddenDirs.push(path);
    } else if (kind === "file") {
      args.push("--ro-bind", "/dev/null", path);
    }
  }
  return args;
}

/**
 * The real paths of those of `paths` that exist, without repeats: bubblewrap refuses to mount
 * on a symlink, and hiding the target hides it through every link.
 */
function realPaths(paths: readonly string[]): string[] {
  const found: string[] = [];
  for (const path of paths) {
    // Absent (or a dangling link): nothing to protect or hide.
    const real = realPathOrNull(path);
    if (real !== null) found.push(real);
  }
  return unique(found);
}

/** "dir", "file" (anything else: sockets, FIFOs, devices) or null when absent; follows links. */
function kindOf(path: string): "dir" | "file" | null {
  const info = statOrNull(path);
  return info === null ? null : info.isDirectory ? "dir" : "file";
}

function isRealFile(path: string): boolean {
  try {
    return Deno.lstatSync(path).isFile;
  } catch {
    return false;
  }
}

function isRealDir(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}

/** Whether bubblewrap can start a sandbox here, and its version. */
export type BwrapProbe = { ok: true; version: string } | { ok: false; reason: string };

/**
 * bubblewrap's absolute path, found on tern's PATH outside every folder sandboxed commands may
 * write (host_programs.ts): the launcher execs what it is given, and a `bwrap` a command left in
 * a workspace folder on the person's PATH would run on the host. `/usr/bin/bwrap` when there is
 * none (the probe then says it is not installed).
 */
export function bwrapProgram(): string {
  return hostProgramOr("bwrap");
}

/** Options for {@linkcode probeBwrap}. */
export interface ProbeOptions {
  /** The bubblewrap executable; default {@linkcode bwrapProgram}. */
  bwrapPath?: string;
}

/** Probes stop after this many milliseconds (a hung start counts as a failure). */
const PROBE_TIMEOUT_MS = 10_000;
const probes = new Map<string, Promise<BwrapProbe>>();

/**
 * Checks once per executable (the result is cached for the process) that bubblewrap exists
 * AND can start a sandbox like the ones {@linkcode bwrapArgs} builds (user and network
 * namespaces may be disabled by the kernel or a container). Never throws: a failure is
 * `{ok: false, reason}` with a sentence saying why.
 */
export function probeBwrap(options: ProbeOptions = {}): Promise<BwrapProbe> {
  const path = options.bwrapPath ?? bwrapProgram();
  let probe = probes.get(path);
  if (probe === undefined) {
    probe = runProbe(path);
    probes.set(path, probe);
  }
  return probe;
}

/**
 * Why bubblewrap cannot exist on operating system `os` (Deno's `build.os`), or undefined on
 * Linux. Elsewhere (macOS) file tools stay in the Deno-confined worker and every shell command
 * needs approval.
 */
export function platformReason(os: string): string | undefined {
  if (os === "linux") return undefined;
  return `bubblewrap runs only on Linux (this is ${os}): file tools stay in the Deno-confined ` +
    "worker, without bubblewrap's view";
}

async function runProbe(path: string): Promise<BwrapProbe> {
  const platform = platformReason(Deno.build.os);
  if (platform !== undefined) return { ok: false, reason: platform };
  const plan: ShellPlan = {
    cwd: "/",
    writable: [],
    readOnly: [],
    hidden: [],
    network: false,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
  };
  // The version and a trial sandbox at once (the probe is on the first command's path). The
  // trial is the sandbox alone, without a command's shell head: its liveness check would read a
  // descriptor 9 that tern inherited (commands get theirs from the launcher) and fail the probe.
  const [version, trial] = await Promise.all([
    output(path, ["--version"]),
    output(path, bwrapArgvFor(plan, ["true"])),
  ]);
  if (!version.ok) return version;
  if (version.code !== 0) {
    return { ok: false, reason: `Cannot run "${path}": ${version.text || "--version failed"}` };
  }
  if (!trial.ok) return trial;
  if (trial.code !== 0) {
    const detail = trial.text || `exit code ${trial.code}`;
    return { ok: false, reason: `Cannot start a bubblewrap sandbox: ${detail}` };
  }
  return { ok: true, version: version.text.replace(/^bubblewrap\s+/, "") };
}

type Output = { ok: true; code: number; text: string } | { ok: false; reason: string };

async function output(path: string, args: string[]): Promise<Output> {
  try {
    const result = await new Deno.Command(path, {
      args,
      cwd: "/",
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      clearEnv: true,
      stdin: "null",
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    }).output();
    const text = new TextDecoder().decode(result.code === 0 ? result.stdout : result.stderr);
    return { ok: true, code: result.code, text: text.trim().split("\n")[0] ?? "" };
  } catch (error) {
    return { ok: false, reason: `Cannot run "${path}": ${describe(error)}` };
  }
}

function describe(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "not installed (install bubblewrap)";
  if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
    return "not permitted (tern needs --allow-run for it)";
  }
  return error instanceof Error ? error.message : String(error);
}
