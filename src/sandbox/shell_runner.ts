/**
 * Shell runners: `bash -c` inside bubblewrap (every profile but `:danger-full-access`), or
 * plainly in a process group (`:danger-full-access`, `--no-sandbox`). Both stop everything the
 * command started on timeout, cancel and exit, and cap the output they keep.
 */
import { UNSANDBOXED_WATCHDOG } from "./background_launch.ts";
import { bashArgv, bwrapArgs, bwrapProgram, launchArgv, sandboxEnv } from "./bwrap.ts";
import { DEFAULT_LIMITS, type ResourceLimits, ulimitPrefix } from "./limits.ts";
import { runInProcessGroup } from "./process.ts";
import { commandCgroupPrefix, killCommandCgroup } from "./run_cgroup.ts";
import {
  type Containment,
  findContainment,
  newCommandCgroup,
  UNCONTAINED_NOTE,
  UNSHARE_ARGS,
} from "./containment.ts";
import type { ShellPlan, ShellResult, ShellRunner, ShellRunOptions } from "./types.ts";

export { isInjectingName, shellEnv } from "./shell_env.ts";
export { type Containment, findContainment, UNCONTAINED_NOTE } from "./containment.ts";

/** Output characters a runner keeps in memory by default (the first and the last half). */
export const SHELL_MEMORY_CHARS = 1_000_000;

/** Options for {@linkcode createBwrapRunner} and {@linkcode createUnsandboxedRunner}. */
export interface ShellRunnerOptions {
  /** Between SIGTERM and SIGKILL on timeout or cancel, in milliseconds; default 500. */
  graceMs?: number;
  /** Output characters kept in memory (head and tail); default {@linkcode SHELL_MEMORY_CHARS}. */
  memoryChars?: number;
}

/** Options for {@linkcode createUnsandboxedRunner}. */
export interface UnsandboxedRunnerOptions extends ShellRunnerOptions {
  /** The commands' limits; default `DEFAULT_LIMITS` (processes are not capped, see there). */
  limits?: ResourceLimits;
  /** How commands are kept together; default: what {@linkcode findContainment} finds. */
  containment?: Promise<Containment>;
}

/** Options for {@linkcode createBwrapRunner}. */
export interface BwrapRunnerOptions extends ShellRunnerOptions {
  /** The bubblewrap executable; default `bwrap` (found on PATH). */
  bwrapPath?: string;
}

/**
 * A runner that confines each command as `plan` says (see `bwrapArgs`), with the call's `cwd`
 * in place of `plan.cwd`, under `plan.limits` (memory, CPU time, file size and processes as
 * rlimits, a tmpfs `/tmp`), started through `launchArgv` (inherited descriptors closed, the
 * seccomp filter passed). bubblewrap runs in its own process group; on timeout or cancel it
 * gets SIGTERM and dies, and `--die-with-parent` with a pid namespace takes every process
 * inside with it (even ones that ignore SIGTERM, `setsid` or `nohup` ones). Background jobs end
 * with the command too. A command killed by signal n inside reports code 128 + n and signal
 * null: only bubblewrap's exit is visible. Does not check that bubblewrap works (see
 * `probeBwrap`); a sandbox that cannot start is a non-zero exit with bubblewrap's message as
 * output. Throws only when bubblewrap cannot be started at all (not installed).
 */
export function createBwrapRunner(plan: ShellPlan, options: BwrapRunnerOptions = {}): ShellRunner {
  return async (command, run) => {
    // The launcher (bash) execs bubblewrap: one that is not there would be its exit code 127,
    // indistinguishable from a command's "not found". Say it as the spawn failure it is.
    findProgram(options.bwrapPath ?? bwrapProgram(), plan.env.PATH);
    const launch = launchArgv(
      plan,
      bwrapArgs({ ...plan, cwd: run.cwd }, command),
      options.bwrapPath,
      { liveness: true },
    );
    return shellResult(
      await runInProcessGroup(launch.program, {
        args: launch.args,
        cwd: "/",
        // bubblewrap passes its own environment on: nothing of it appears on its command line.
        env: sandboxEnv(plan),
        // The launcher moves it to LIVENESS_FD: a command that starts after tern died exits.
        livenessPipe: true,
        bubblewrap: true,
        ...groupOptions(run, options),
      }),
    );
  };
}

/**
 * Throws Deno's NotFound unless `program` (a path, or a name searched in `path`) is a file.
 * A few `stat` calls: cheap beside a sandbox's start.
 */
function findProgram(program: string, path = "/usr/local/bin:/usr/bin:/bin"): void {
  const candidates = program.includes("/")
    ? [program]
    : path.split(":").filter((dir) => dir !== "").map((dir) => `${dir}/${program}`);
  for (const candidate of candidates) {
    try {
      if (Deno.statSync(candidate).isFile) return;
    } catch {
      // Not here.
    }
  }
  throw new Deno.errors.NotFound(`Failed to spawn '${program}': entity not found`);
}

/**
 * A runner without any sandbox, for `:danger-full-access` and `--no-sandbox`: `bash -c` in its
 * own process group with `env` as its environment (build it with `shellEnv`; names that
 * inject code are dropped all the same), under `options.limits` except the process cap (outside
 * a user namespace RLIMIT_NPROC counts all the person's processes) and `/tmp` (the host's).
 * Timeout, cancel and background jobs end the whole group, and so does tern's end, even by
 * SIGKILL (a watchdog, see `UNSANDBOXED_WATCHDOG`). A process that leaves the group (`setsid`,
 * a double fork into a new session) ends with the command too, where the first command finds a
 * way (see {@linkcode findContainment}): each command in a cgroup of its own, killed whole when
 * it ends; else in a pid namespace of its own (`unshare`); else it is out of reach, which the
 * first command's output says ({@linkcode UNCONTAINED_NOTE}). Throws only when bash cannot be
 * started.
 */
export function createUnsandboxedRunner(
  env: Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>),
  options: UnsandboxedRunnerOptions = {},
): ShellRunner {
  const prefix = ulimitPrefix(options.limits ?? DEFAULT_LIMITS, { processes: false });
  let found: Promise<Containment> | undefined;
  let noted = false;
  return async (command, run) => {
    const containment = await (found ??= options.containment ?? findContainment());
    const commandEnv = sandboxEnv({ env: typeof env === "function" ? env() : env });
    const group = {
      cwd: run.cwd,
      env: commandEnv,
      livenessPipe: true,
      ...groupOptions(run, options),
    };
    let result: ShellResult;
    if (containment.kind === "cgroup") {
      const dir = newCommandCgroup(containment.base);
      const [bash, ...args] = bashArgv(command, commandCgroupPrefix(dir) + prefix);
      // Killed before the output drains: a process that left the group holds its pipes.
      result = await runInProcessGroup(bash, {
        args,
        ...group,
        afterExit: () => killCommandCgroup(dir),
      });
    } else {
      const [bash, ...args] = bashArgv(command, UNSANDBOXED_WATCHDOG + prefix);
      result = containment.kind === "pid-namespace"
        ? await runInProcessGroup(containment.unshare, {
          args: [...UNSHARE_ARGS, bash, ...args],
          ...group,
        })
        : await runInProcessGroup(bash, { args, ...group });
    }
    if (containment.kind === "none" && !noted) {
      noted = true;
      const note = `\n[tern: ${UNCONTAINED_NOTE}]\n`;
      run.onOutput?.(note);
      result = {
        ...result,
        output: result.output + note,
        totalChars: result.totalChars + note.length,
      };
    }
    return shellResult(result);
  };
}

function groupOptions(run: ShellRunOptions, options: ShellRunnerOptions) {
  return {
    timeoutMs: run.timeoutMs,
    signal: run.signal,
    onOutput: run.onOutput,
    graceMs: options.graceMs,
    memoryChars: options.memoryChars ?? SHELL_MEMORY_CHARS,
  };
}

function shellResult(result: ShellResult): ShellResult {
  const { output, totalChars, code, signal, timedOut, cancelled } = result;
  return { output, totalChars, code, signal, timedOut, cancelled };
}
