/**
 * Starting a process in a process group of its own (its pgid is its pid), signalling that group
 * and stopping it gracefully, then by force. Shared by every place that starts a process whose
 * descendants must end with it: the sandbox's command runner, the tool worker, hardened git, and
 * (through watched_process_group.ts, which adds a watchdog) MCP servers and language servers.
 */
import { hostProgram } from "./host_programs.ts";

/** Where `setsid` (util-linux) is looked for; without it, Deno's `detached` is used. */
const SETSID_PATHS: readonly string[] = ["/usr/bin/setsid", "/bin/setsid"];

/** `setsid`'s path once looked up, null when there is none. */
let setsidPath: string | null | undefined;

/** Leaders started by {@linkcode spawnProcessGroup} that have not exited yet. */
const unreaped = new Set<number>();

/**
 * Starts `command` like `new Deno.Command(command, options).spawn()`, in a new session and
 * process group whose id is the child's pid, so {@linkcode signalProcessGroup} reaches it and
 * everything it starts. Deno's `detached: true` does the same by `fork()`ing this whole process
 * (its cost grows with our memory); this starts `setsid -- <program> <args>` with
 * `posix_spawn` instead: `setsid` makes itself a session leader and execs the program under the
 * same pid. The program is looked up here (on the `PATH` of `options.env`, else ours, never in
 * a folder sandboxed commands may write: host_programs.ts) so a missing one throws Deno's
 * `NotFound` (and a file that cannot run `PermissionDenied`) as a plain spawn would. Without `setsid` on the machine, falls back to `detached: true`.
 */
export function spawnProcessGroup(
  command: string,
  options: Omit<Deno.CommandOptions, "detached"> = {},
): Deno.ChildProcess {
  const program = resolveProgram(command, options);
  const setsid = findSetsid();
  if (setsid === null) return new Deno.Command(program, { ...options, detached: true }).spawn();
  const child = new Deno.Command(setsid, {
    ...options,
    args: ["--", program, ...options.args ?? []],
  }).spawn();
  unreaped.add(child.pid);
  const forget = () => unreaped.delete(child.pid);
  child.status.then(forget, forget);
  return child;
}

function findSetsid(): string | null {
  if (setsidPath === undefined) setsidPath = SETSID_PATHS.find(isExecutable) ?? null;
  return setsidPath;
}

function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * `command` as an absolute path, found the way `execvp` would (on the `PATH` of `options.env`,
 * else ours; relative to `options.cwd`) but never in a folder sandboxed commands may write (see
 * host_programs.ts); throws Deno's NotFound without one, PermissionDenied for a file that
 * cannot run.
 */
export function resolveProgram(
  command: string,
  options: Pick<Deno.CommandOptions, "cwd" | "env" | "clearEnv">,
): string {
  if (command.includes("/")) {
    const path = command.startsWith("/") ? command : `${options.cwd ?? Deno.cwd()}/${command}`;
    if (isExecutable(path)) return hostProgram(path);
    if (exists(path)) {
      throw new Deno.errors.PermissionDenied(`Failed to spawn '${command}': permission denied`);
    }
    throw new Deno.errors.NotFound(`Failed to spawn '${command}': entity not found`);
  }
  return hostProgram(command, searchPath(options));
}

function searchPath(options: Pick<Deno.CommandOptions, "env" | "clearEnv">): string {
  const given = options.env?.PATH;
  if (given !== undefined) return given;
  if (options.clearEnv) return "/usr/local/bin:/usr/bin:/bin";
  try {
    return Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin";
  } catch {
    return "/usr/local/bin:/usr/bin:/bin";
  }
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Sends `signal` to every process in group `pgid`. Returns false when the group has no
 * processes left. Never throws for a missing group. A leader {@linkcode spawnProcessGroup}
 * started a moment ago may not have made its group yet (`setsid` has not run): while it has
 * not exited, the signal then goes to it alone, which is all the group it can have had.
 */
export function signalProcessGroup(pgid: number, signal: Deno.Signal): boolean {
  if (sendSignal(-pgid, signal)) return true;
  return unreaped.has(pgid) && sendSignal(pgid, signal);
}

function sendSignal(target: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(target, signal);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** The pids of `pid`'s children (from /proc), none when it cannot be read. */
function childrenOf(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter((text) => text !== "").map(Number);
  } catch {
    return [];
  }
}

/**
 * Kills (SIGKILL) the children of `pid`, a bubblewrap launch's leader: bubblewrap's child is
 * the sandbox's init (pid 1 of its pid namespace), whose death ends every process in the
 * namespace. bubblewrap arms that init's `--die-with-parent` only part way through its set-up,
 * so a bubblewrap killed before then leaves the sandbox running, with the command in it (seen
 * here: 12 of 20 sandboxes whose bubblewrap got SIGTERM 10 ms after its start). Call it before
 * the group is signalled: once bubblewrap is gone, its child is no child of anyone we know.
 * Never throws. Deno reads no process's `/proc` entries without every permission (`-A`), so
 * under the permissions bin/tern and the compiled binary give, this finds no child and does
 * nothing: the sandbox's liveness pipe (bwrap.ts's `livenessCheck`), closed first by
 * `stopLaunch`, is what ends such a sandbox; this is only a second net under `-A`.
 */
export function killSandboxInit(pid: number): void {
  for (const child of childrenOf(pid)) {
    try {
      Deno.kill(child, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

/**
 * Stops group `pgid`: SIGTERM, then SIGKILL once the leader has exited (`exited` settles) or
 * `graceMs` milliseconds have passed, whichever is first, so no process that ignores SIGTERM
 * survives.
 */
export async function terminateProcessGroup(
  pgid: number,
  exited: Promise<unknown>,
  graceMs = 500,
): Promise<void> {
  if (!signalProcessGroup(pgid, "SIGTERM")) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, graceMs));
  await Promise.race([exited.catch(() => {}), grace]);
  clearTimeout(timer);
  signalProcessGroup(pgid, "SIGKILL");
}
