/**
 * A run's cgroups: the caps that hold for all of a run's commands together. The pids cgroup caps
 * their processes (the kernel exempts root from RLIMIT_NPROC); the memory cgroup caps the memory
 * they use together (RLIMIT_DATA is per process: eight processes at the per-process limit, or a
 * command's `/tmp` and `/dev/shm` filled beside them, would otherwise take the machine, and the
 * kernel's out-of-memory killer would then pick any process of it, tern included). Within the
 * memory cgroup the kernel kills one of the run's own processes instead.
 *
 * Each sandbox's launcher joins them before it execs bubblewrap, by writing `0` (itself) to each
 * cgroup's join file (`tasks` under cgroup v1; `cgroup.procs` under v2): a builtin, no process
 * start, and bubblewrap, its init and everything in the sandbox are born inside. Nothing of the
 * cgroup tree is bound into the sandbox. Where a cgroup cannot be made (not root, no such
 * controller, a read-only cgroup tree) there is none, and the rlimits are the caps.
 *
 * Under cgroup v1 each controller has its own tree, and the run's cgroups are made under the
 * cgroup tern itself is in (a container's own limits keep holding); under cgroup v2 one cgroup
 * holds both controllers, made in the root cgroup only (a command can join only a cgroup inside
 * its own cgroup namespace, and a non-root cgroup with processes hands no controller down).
 *
 * Deno lets only `--allow-all` touch `/sys`, so the cgroups are made and removed by a short
 * `bash` script: one process when the run opens and one when it closes, none per command.
 *
 * A subagent (`tern child`, a run of its own) makes none: its parent hands it its run's cgroups
 * with the request ({@linkcode inheritRunCgroup}), its commands join them, and one cap holds
 * for the parent's and all its children's commands together. The parent removes them.
 *
 * Apart from those, a command run without a sandbox gets a cgroup v2 cgroup of its own, with no
 * cap, so that all of it can be killed at its end ({@linkcode commandCgroupPrefix},
 * {@linkcode killCommandCgroup}): a process that left its process group (`setsid`) included.
 * That costs a `mkdir` and a kill script per such command; sandboxed commands make none.
 */

/** A run's cgroups as data: what a subagent is handed to join them. */
export interface SharedRunCgroup {
  /** The folders made in the cgroup trees (one per controller under v1, one under v2). */
  readonly paths: readonly string[];
  /**
   * The files a shell writes `0` to in order to join (itself, the writing thread): `tasks` under
   * cgroup v1, `cgroup.procs` under v2.
   */
  readonly joinFiles: readonly string[];
  /** The cap on the run's processes, when a pids cgroup holds it. */
  readonly processes?: number;
  /** The cap on the run's memory in bytes, when a memory cgroup holds it. */
  readonly memoryBytes?: number;
  /** The memory cgroup's events file (its `oom_kill` count), when there is one. */
  readonly events?: string;
}

/** A run's cgroups. */
export interface RunCgroup extends SharedRunCgroup {
  /**
   * How many processes the kernel has killed for the memory cap so far (0 without a memory
   * cgroup, or where the kernel does not count them). One process start; never throws.
   */
  oomKills(): Promise<number>;
  /** Removes them (once they have no processes left). Never throws. */
  remove(): Promise<void>;
}

/** The caps to set. */
export interface RunCgroupCaps {
  /** Processes and threads at once. */
  processes: number;
  /**
   * Memory of all the run's processes together, in bytes (swap included where the kernel counts
   * it). Lowered to three quarters of the machine's memory, and under cgroup v1 to three
   * quarters of the limit of the cgroup tern runs in (a container's).
   */
  memoryBytes: number;
}

/**
 * `where CONTROLLER` sets `kind` and `base` to where that controller's cgroups go: `v1` and the
 * cgroup tern is in within that controller's own tree (from /proc/self/cgroup), or `v2` and the
 * unified tree's root when it hands the controller to its children; fails where neither is
 * there. Builtins only.
 */
const FIND = `
where() {
  local line names path controllers
  if [ -e "/sys/fs/cgroup/$1/cgroup.procs" ]; then
    while IFS= read -r line; do
      line="\${line#*:}"; names="\${line%%:*}"; path="\${line#*:}"
      case ",$names," in
        *",$1,"*) kind=v1; base="/sys/fs/cgroup/$1\${path%/}"; return 0 ;;
      esac
    done </proc/self/cgroup
    return 1
  fi
  [ -e /sys/fs/cgroup/cgroup.subtree_control ] || return 1
  read -r controllers </sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || return 1
  case " $controllers " in *" $1 "*) kind=v2; base=/sys/fs/cgroup ;; *) return 1 ;; esac
}`;

/**
 * $1 is the name, $2 the process cap, $3 the memory cap in bytes; prints one line for each
 * folder made (`dir <folder>`), each join file (`join <file>`) and each cap set (`pids <n>`,
 * `memory <bytes>`). A v1 join file is `tasks`: writing 0 there moves the writing thread alone
 * and takes no global lock, where `cgroup.procs` waits for an RCU grace period (about 16 ms here
 * when none was written to for a while). A shell is one thread: moving it moves the process.
 * Exits 3 when no cgroup could be made.
 */
const MAKE = `${FIND}
memory="$3"
while read -r key value _; do
  if [ "$key" = MemTotal: ]; then
    ((value * 768 < memory)) && memory=$((value * 768))
    break
  fi
done </proc/meminfo
made=0
v2dir=""
for controller in pids memory; do
  where "$controller" || continue
  dir="$base/$1"
  if [ "$kind" = v2 ]; then
    if [ -z "$v2dir" ]; then
      mkdir "$dir" 2>/dev/null || continue
      v2dir="$dir"
      echo "dir $dir"
      echo "join $dir/cgroup.procs"
    fi
  else
    mkdir "$dir" 2>/dev/null || continue
  fi
  ok=1
  if [ "$controller" = pids ]; then
    echo "$2" >"$dir/pids.max" 2>/dev/null || ok=0
  elif [ "$kind" = v1 ]; then
    # A container's own limit (the nearest of tern's cgroup and its parents) lowers it too.
    while read -r key value; do
      if [ "$key" = hierarchical_memory_limit ]; then
        ((value / 4 * 3 < memory)) && memory=$((value / 4 * 3))
        break
      fi
    done <"$base/memory.stat"
    echo "$memory" >"$dir/memory.limit_in_bytes" 2>/dev/null || ok=0
    events="$dir/memory.oom_control"
    [ -e "$dir/memory.memsw.limit_in_bytes" ] &&
      { echo "$memory" >"$dir/memory.memsw.limit_in_bytes"; } 2>/dev/null
    # cgroup v1 charges socket buffers only against a TCP limit of their own, beside the cap:
    # a quarter of it.
    [ -e "$dir/memory.kmem.tcp.limit_in_bytes" ] &&
      { echo $((memory / 4)) >"$dir/memory.kmem.tcp.limit_in_bytes"; } 2>/dev/null
  else
    echo "$memory" >"$dir/memory.max" 2>/dev/null || ok=0
    events="$dir/memory.events"
    [ -e "$dir/memory.swap.max" ] && { echo 0 >"$dir/memory.swap.max"; } 2>/dev/null
  fi
  if [ "$ok" = 0 ]; then
    [ "$kind" = v1 ] && rmdir "$dir"
    continue
  fi
  if [ "$kind" = v1 ]; then
    echo "dir $dir"
    if [ -e "$dir/tasks" ]; then echo "join $dir/tasks"; else echo "join $dir/cgroup.procs"; fi
  fi
  if [ "$controller" = pids ]; then echo "pids $2"; else echo "memory $memory"; echo "events $events"; fi
  made=1
done
if [ "$made" = 0 ]; then
  [ -n "$v2dir" ] && rmdir "$v2dir"
  exit 3
fi
exit 0`;

/** $1 is a memory cgroup's events file: prints its `oom_kill` count. */
const OOM_KILLS = `
while read -r key value; do
  if [ "$key" = oom_kill ]; then echo "$value"; exit 0; fi
done <"$1"
echo 0`;

/** Each argument is a folder; retried for a second while the processes of a killed command go. */
const REMOVE = `
for dir in "$@"; do
  for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    rmdir "$dir" 2>/dev/null && break
    [ -d "$dir" ] || break
    sleep 0.05
  done
done
exit 0`;

/**
 * $1 is the name prefix, $2 the folder the runs' tmp folders are in: removes each cgroup of
 * that prefix whose tmp folder (its name without the prefix) is gone. rmdir removes no cgroup that has
 * processes.
 */
const SWEEP = `${FIND}
for controller in pids memory; do
  where "$controller" || continue
  for dir in "$base/$1"*; do
    [ -d "$dir" ] || continue
    name="\${dir##*/}"
    tmp="$2/\${name#"$1"}"
    if [ ! -e "$tmp" ] && [ ! -L "$tmp" ] && rmdir "$dir" 2>/dev/null; then echo "$dir"; fi
  done
done
exit 0`;

/**
 * The prefix of the cgroups of runs whose private tmp folders are in `tmpDir`: `tern-`,
 * the folder's 32-bit FNV-1a hash in hex, `-`. Runs with another TMPDIR have another prefix, so
 * a sweep never removes the cgroup of a live run whose tmp folder it cannot see.
 */
export function runCgroupPrefix(tmpDir: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(tmpDir)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return `tern-${hash.toString(16).padStart(8, "0")}-`;
}

/**
 * Makes the run's cgroups `name` (the run's private tmp folder's name, so that
 * {@linkcode removeStaleRunCgroups} can tell whether its run is alive) with `caps`: a pids
 * cgroup and a memory cgroup, each where the machine has one. Null when neither can be made
 * here. Never throws.
 */
export async function makeRunCgroup(name: string, caps: RunCgroupCaps): Promise<RunCgroup | null> {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new TypeError(`Cannot name a cgroup "${name}"`);
  const printed = await script(MAKE, [
    name,
    String(Math.floor(caps.processes)),
    // Under bash's 64-bit arithmetic, so a huge setting is still lowered, not overflowed.
    String(Math.min(Math.floor(caps.memoryBytes), 2 ** 62)),
  ]);
  if (printed === null) return null;
  const paths: string[] = [];
  const joinFiles: string[] = [];
  let processes: number | undefined;
  let memoryBytes: number | undefined;
  let events: string | undefined;
  for (const line of printed.split("\n")) {
    const space = line.indexOf(" ");
    const [key, value] = [line.slice(0, space), line.slice(space + 1)];
    if (key === "dir") paths.push(value);
    else if (key === "join") joinFiles.push(value);
    else if (key === "pids") processes = Number(value);
    else if (key === "memory") memoryBytes = Number(value);
    else if (key === "events") events = value;
  }
  if (paths.length === 0 || joinFiles.length === 0) return null;
  const shared: SharedRunCgroup = {
    paths,
    joinFiles,
    ...(processes === undefined ? {} : { processes }),
    ...(memoryBytes === undefined ? {} : { memoryBytes }),
    ...(events === undefined ? {} : { events }),
  };
  return { ...joined(shared), remove: async () => void await script(REMOVE, paths) };
}

/** `shared` as a run's cgroups that this process joins and never removes. */
function joined(shared: SharedRunCgroup): RunCgroup {
  const { events } = shared;
  return {
    ...shared,
    oomKills: async () =>
      events === undefined ? 0 : Number(await script(OOM_KILLS, [events]) ?? 0) || 0,
    remove: () => Promise.resolve(),
  };
}

/** The parent's run cgroups this process (a subagent) was handed, if any. */
let inherited: SharedRunCgroup | undefined;

/**
 * Hands this process its parent's run cgroups (a `tern child` does, from its request, before its
 * sandbox opens): every sandbox opened from then on joins them instead of making its own, and
 * leaves them in place when it closes (the parent removes them).
 */
export function inheritRunCgroup(shared: SharedRunCgroup): void {
  inherited = shared;
}

/** The run cgroups a sandbox opened now joins without making them, if this process has any. */
export function inheritedRunCgroup(): RunCgroup | undefined {
  return inherited === undefined ? undefined : joined(inherited);
}

/**
 * Removes the cgroups of runs that ended without removing theirs: each one whose name starts
 * with `prefix` and whose run's tmp folder (of the same name, in `tmpDir`) is gone. A cgroup
 * with processes cannot be removed, so none in use is. Returns the folders removed; never throws.
 */
export async function removeStaleRunCgroups(prefix: string, tmpDir: string): Promise<string[]> {
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

/**
 * $1 is a name: prints the cgroup v2 folder that commands run without a sandbox get their
 * cgroups in (tern's own cgroup, in the unified tree at `/sys/fs/cgroup` or, on a hybrid
 * machine, `/sys/fs/cgroup/unified`), once a trial one was made there, had `cgroup.kill` and
 * took a process. Exits 3 when there is none.
 */
const COMMAND_BASE = `
mount=""
for candidate in /sys/fs/cgroup /sys/fs/cgroup/unified; do
  [ -e "$candidate/cgroup.controllers" ] && { mount=$candidate; break; }
done
[ -n "$mount" ] || exit 3
own=""
while IFS= read -r line; do
  case "$line" in 0::*) own="\${line#0::}" ;; esac
done </proc/self/cgroup
base="$mount\${own%/}"
trial="$base/$1"
mkdir "$trial" 2>/dev/null || exit 3
ok=0
[ -e "$trial/cgroup.kill" ] && (echo 0 >"$trial/cgroup.procs") 2>/dev/null && ok=1
for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$trial" 2>/dev/null && break; sleep 0.02; done
[ "$ok" = 1 ] || exit 3
echo "$base"`;

/**
 * $1 is a command's cgroup: kills every process in it (whatever its session or process group)
 * and removes it once they are gone, waiting up to two seconds.
 */
const KILL_COMMAND = `
[ -d "$1" ] || exit 0
echo 1 >"$1/cgroup.kill"
for ((i = 0; i < 200; i++)); do rmdir "$1" 2>/dev/null && exit 0; sleep 0.01; done
exit 1`;

/**
 * The cgroup v2 folder in which each command run without a sandbox can get a cgroup of its
 * own (see {@linkcode killCommandCgroup}): tern's own cgroup, where it may make one there that
 * has `cgroup.kill` (Linux 5.14) and that a process can join. Null elsewhere (cgroup v1 only, a
 * read-only cgroup tree, not root nor delegated the cgroup). One process start; never throws.
 */
export async function findCommandCgroupBase(): Promise<string | null> {
  const trial = `tern-probe-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const base = await script(COMMAND_BASE, [trial]);
  return base === null || !base.startsWith("/sys/fs/cgroup") ? null : base;
}

/**
 * The head of a `bash -c` script that runs a command without a sandbox in the cgroup `dir`
 * (made here, then joined by the shell itself, so the command and everything it starts are
 * born inside; a failure is exit 126 with a message naming the folder), with a watchdog on
 * tern's liveness pipe (stdin) like `UNSANDBOXED_WATCHDOG`'s: when tern is gone (even by
 * SIGKILL) it kills the cgroup, removes it, then kills the process group. The watchdog starts
 * before the shell joins, so it is outside the cgroup it kills; it ignores SIGTERM (a stop
 * sends SIGTERM to the group, then SIGKILL). The command's stdin is `/dev/null`. One process
 * start (`mkdir`).
 */
export function commandCgroupPrefix(dir: string): string {
  const quoted = `'${dir.replaceAll("'", `'\\''`)}'`;
  // The folder as printf's argument, never inside the format or a double-quoted string.
  const fail = `{ printf 'tern: Cannot run the command in a cgroup of its own: "%s" cannot be` +
    ` made or joined; the command did not run\\n' ${quoted} >&2; exit 126; }`;
  const remove = `for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do ` +
    `rmdir ${quoted} 2>/dev/null && break; sleep 0.05; done`;
  return `exec 9<&0 </dev/null; mkdir ${quoted} 2>/dev/null || ${fail}; ` +
    `( trap '' TERM; ( read -r -u 9 _; echo 1 >${quoted}/cgroup.kill; ${remove}; kill -KILL 0 ) & ` +
    `) >/dev/null 2>&1; exec 9<&-; { echo 0 >${quoted}/cgroup.procs; } 2>/dev/null || ${fail}; `;
}

/**
 * Kills every process in the command cgroup `dir` (cgroup v2 `cgroup.kill`: whatever their
 * session or process group, forks under way included) and removes it. One process start;
 * never throws.
 */
export async function killCommandCgroup(dir: string): Promise<void> {
  await script(KILL_COMMAND, [dir]);
}
