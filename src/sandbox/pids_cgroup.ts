/**
 * A pids cgroup per run: the process cap that holds for root, whom the kernel exempts from
 * RLIMIT_NPROC. Each one-shot sandbox's shell joins it first, by writing `0` (itself) to its
 * `tasks` file (cgroup v1; `cgroup.procs` under v2), bound into the sandbox alone, so nothing
 * else of the cgroup tree is writable there: a builtin, no process start. A warm shell's server
 * joins once, when it starts, and the commands it forks are born inside. Where no cgroup can be
 * made (not root, no pids controller, a read-only cgroup tree) there is none, and RLIMIT_NPROC
 * is the cap.
 *
 * Deno lets only `--allow-all` touch `/sys`, so the cgroup is made and removed by a short
 * `bash` script: one process when the run opens and one when it closes, none per command.
 */

/** A run's pids cgroup. */
export interface PidsCgroup {
  /** Its folder in the cgroup tree. */
  readonly path: string;
  /**
   * The file a shell writes `0` to in order to join (itself, the writing thread): `tasks` under
   * cgroup v1, `cgroup.procs` under v2.
   */
  readonly joinFile: string;
  /** Removes it (once it has no processes left). Never throws. */
  remove(): Promise<void>;
}

/**
 * Where a pids hierarchy may be mounted: cgroup v1's own, else the unified tree of cgroup v2
 * when it hands the pids controller to its children. Under cgroup v2 a command can join only a
 * cgroup inside its own cgroup namespace, so there joining works only where tern runs in the
 * root cgroup; elsewhere it fails and RLIMIT_NPROC is the only cap.
 */
const FIND_HIERARCHY = `
if [ -e /sys/fs/cgroup/pids/cgroup.procs ]; then root=/sys/fs/cgroup/pids
elif grep -qw pids /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then root=/sys/fs/cgroup
else exit 3; fi`;

/**
 * $1 is the name, $2 the cap; prints the folder made and, on the next line, the file to join it
 * by: cgroup v1's `tasks`, where writing 0 moves the writing thread alone and takes no global
 * lock, else `cgroup.procs`, which waits for an RCU grace period (about 16 ms here when none was
 * written to for a while). A shell is one thread: moving it moves the process.
 */
const MAKE = `${FIND_HIERARCHY}
dir="$root/$1"
mkdir "$dir" 2>/dev/null || exit 4
if ! echo "$2" >"$dir/pids.max" 2>/dev/null; then rmdir "$dir"; exit 5; fi
join=cgroup.procs
[ "$root" = /sys/fs/cgroup/pids ] && [ -e "$dir/tasks" ] && join=tasks
printf '%s\n%s' "$dir" "$dir/$join"`;

/** $1 is the folder; retried for a second while the processes of a killed command go. */
const REMOVE = `
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  rmdir "$1" 2>/dev/null && exit 0
  [ -d "$1" ] || exit 0
  sleep 0.05
done`;

/**
 * $1 is the name prefix, $2 the folder the runs' tmp folders are in: removes each cgroup of
 * that prefix whose tmp folder (its name without the prefix) is gone. rmdir removes no cgroup that has
 * processes.
 */
const SWEEP = `${FIND_HIERARCHY}
for dir in "$root/$1"*; do
  [ -d "$dir" ] || continue
  name="\${dir##*/}"
  tmp="$2/\${name#"$1"}"
  if [ ! -e "$tmp" ] && [ ! -L "$tmp" ] && rmdir "$dir" 2>/dev/null; then echo "$dir"; fi
done
exit 0`;

/**
 * The prefix of the pids cgroups of runs whose private tmp folders are in `tmpDir`: `tern-`,
 * the folder's 32-bit FNV-1a hash in hex, `-`. Runs with another TMPDIR have another prefix, so
 * a sweep never removes the cgroup of a live run whose tmp folder it cannot see.
 */
export function pidsCgroupPrefix(tmpDir: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(tmpDir)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return `tern-${hash.toString(16).padStart(8, "0")}-`;
}

/**
 * Makes the pids cgroup `name` (the run's private tmp folder's name, so that
 * {@linkcode removeStalePidsCgroups} can tell whether its run is alive), capped at `max`
 * processes. Null when that cannot be done here. Never throws.
 */
export async function makePidsCgroup(name: string, max: number): Promise<PidsCgroup | null> {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new TypeError(`Cannot name a cgroup "${name}"`);
  const printed = await script(MAKE, [name, String(Math.floor(max))]);
  const [made, joinFile] = printed?.split("\n") ?? [];
  if (!made || !joinFile) return null;
  return {
    path: made,
    joinFile,
    remove: async () => void await script(REMOVE, [made]),
  };
}

/**
 * Removes the pids cgroups of runs that ended without removing theirs: each one whose name
 * starts with `prefix` and whose run's tmp folder (of the same name, in `tmpDir`) is gone. A
 * cgroup with processes cannot be removed, so none in use is. Returns the folders removed;
 * never throws.
 */
export async function removeStalePidsCgroups(prefix: string, tmpDir: string): Promise<string[]> {
  const removed = await script(SWEEP, [prefix, tmpDir]);
  return removed === null ? [] : removed.split("\n").filter((line) => line !== "");
}

/** Runs `bash -c text` with `args`; its output, or null when it failed. Never throws. */
async function script(text: string, args: string[]): Promise<string | null> {
  try {
    const result = await new Deno.Command("bash", {
      args: ["-c", text, "tern-cgroup", ...args],
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return result.success ? new TextDecoder().decode(result.stdout).trim() : null;
  } catch {
    return null;
  }
}
