/**
 * What starts one background process (`bash` with `run_in_background`): a one-shot bubblewrap
 * sandbox of its own (never the warm shell, which kills every process after each command), or
 * for `:danger-full-access` and `--no-sandbox` a plain `bash` in a process group of its own.
 * Inside, a small wrapper runs the command with stderr merged into stdout (its log) and, when a
 * port is declared, probes `127.0.0.1:<port>` from inside the process's own network namespace
 * and reports readiness on stderr, the supervisor's channel.
 */
import { bwrapArgvFor, launchArgv, sandboxEnv, shellPrefix } from "./bwrap.ts";
import { DEFAULT_LIMITS, type ResourceLimits, ulimitPrefix } from "./limits.ts";
import type { ShellPlan } from "./types.ts";
import { type Containment, newCommandCgroup } from "./containment.ts";
import { commandCgroupPrefix, killCommandCgroup } from "./run_cgroup.ts";

/** How to start one background process: program, arguments and complete environment. */
export interface BackgroundLaunch {
  program: string;
  args: string[];
  env: Record<string, string>;
  /** The leader's working directory (bubblewrap's is `/`; the command's is set inside). */
  cwd: string;
  /** Whether it runs in bubblewrap. */
  confined: boolean;
  /**
   * Called once the process has exited: the sandbox lets go of what it holds for it (the
   * guards' mount points). Never throws.
   */
  release?: () => void;
  /**
   * Called once the leader has exited and its process group was killed: ends what left the
   * group (a cgroup of its own, outside bubblewrap). Never throws.
   */
  afterExit?: () => Promise<void>;
}

/** Builds the launch of `command` in `cwd`; `token` is the readiness marker (see below). */
export type BackgroundLauncher = (
  command: string,
  options: { cwd: string; port?: number; token: string },
) => Promise<BackgroundLaunch>;

/**
 * The wrapper run by `bash -c <wrapper> tern-process <command> <port> <token>`: fd 3 keeps the
 * real stderr (the supervisor's channel), stderr joins stdout (the log). With a port, a probe
 * in the background tries `127.0.0.1:<port>` every 0.2 s with bash's `/dev/tcp` (no program
 * of the sandbox's needed) and writes the token to fd 3 once it connects, then ends. The
 * command itself runs last in the main shell, with its positional parameters cleared and
 * without fd 3, so it is the sandbox's main process: when it exits, the sandbox ends.
 */
export const BACKGROUND_WRAPPER = "exec 3>&2 2>&1; c=$1 p=$2 t=$3; set --; " +
  'if [ -n "$p" ]; then ( exec </dev/null >/dev/null; ' +
  'until (: <>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do sleep 0.2; done; ' +
  'echo "$t" >&3 ) & fi; exec 3>&-; eval "$c"';

/**
 * The head of a `bash -c` script that runs a command outside bubblewrap (no
 * `--die-with-parent` there), in the background or not: stdin is tern's liveness pipe, which
 * reaches end-of-file only when tern closes it or is gone (even by SIGKILL); a watchdog then
 * kills the process group. The watchdog is a grandchild, no job of the command's shell, so a
 * `wait` in the command waits only for what the command started. It ignores SIGTERM from its
 * birth (the subshell that forks it ignores it first, and the command starts only once that
 * subshell is done): a stop (a timeout, `process_stop`) sends SIGTERM to the whole group, then
 * SIGKILL after a grace, and a tern killed in between would otherwise leave a process that
 * ignores SIGTERM running for ever. The command's stdin is `/dev/null`.
 */
export const UNSANDBOXED_WATCHDOG = "exec 9<&0 </dev/null; " +
  "( trap '' TERM; ( read -r -u 9 _; kill -KILL 0 ) & ) >/dev/null 2>&1; exec 9<&-; ";

/**
 * The launch of `command` in its own one-shot bubblewrap sandbox confined as `plan` says
 * (the view, the limits, the run's cgroups, the network), with `cwd` as its working
 * directory. Started with a liveness pipe as stdin (see `LIVENESS_FD`): with
 * `--die-with-parent` and its pid namespace, the sandbox and everything in it die with tern.
 * A plan with host grants through a proxy is run without the proxy (loopback only): the
 * proxy of a shell command lives as long as that command.
 */
export function sandboxedLaunch(
  plan: ShellPlan,
  command: string,
  options: { cwd: string; port?: number; token: string; bwrapPath?: string },
): BackgroundLaunch {
  const own: ShellPlan = { ...plan, cwd: options.cwd };
  delete own.proxy;
  const argv = bwrapArgvFor(own, [
    "bash",
    "-c",
    shellPrefix(own) + BACKGROUND_WRAPPER,
    "tern-process",
    command,
    options.port === undefined ? "" : String(options.port),
    options.token,
  ]);
  const launch = launchArgv(own, argv, options.bwrapPath, { liveness: true });
  return { ...launch, env: sandboxEnv(own), cwd: "/", confined: true };
}

/**
 * The launch of the program `argv` as a protocol server (a language server): in its own
 * one-shot sandbox confined exactly as `plan` says for a shell command (the view, the limits,
 * the run's cgroups, the network; no proxy, as for a background process), run by
 * `bash -c '<limits> exec "$@"'` so the limits apply, its stdin and stdout its protocol and
 * its stderr apart. Its stdin is no liveness pipe (it carries the protocol): bubblewrap's
 * `--die-with-parent` and its pid namespace take the server when tern dies, and a server that
 * starts after tern died reads end-of-file on stdin, which ends a language server.
 */
export function sandboxedServerLaunch(
  plan: ShellPlan,
  argv: readonly string[],
  options: { cwd: string; bwrapPath?: string },
): BackgroundLaunch {
  const own: ShellPlan = { ...plan, cwd: options.cwd };
  delete own.proxy;
  const inner = ["bash", "-c", shellPrefix(own) + 'exec "$@"', "tern-server", ...argv];
  const launch = launchArgv(own, bwrapArgvFor(own, inner), options.bwrapPath);
  return { ...launch, env: sandboxEnv(own), cwd: "/", confined: true };
}

/**
 * The launch of `command` with no sandbox (`:danger-full-access`, `--no-sandbox`, or a grant
 * approved to run without one): `bash` in `cwd` under `limits` but the process cap (see
 * `createUnsandboxedRunner`), with a watchdog that kills its process group when tern dies.
 * A process that leaves its group (`setsid`) is out of reach: there is no sandbox to end.
 */
export function unsandboxedLaunch(
  env: Readonly<Record<string, string>>,
  command: string,
  options: {
    cwd: string;
    port?: number;
    token: string;
    limits?: ResourceLimits;
    containment?: Containment;
  },
): BackgroundLaunch {
  const prefix = ulimitPrefix(options.limits ?? DEFAULT_LIMITS, { processes: false });
  // In a cgroup of its own where one can be made (see containment.ts), killed whole at its end:
  // a process that left its group (`setsid`) goes too. Else the group and its watchdog only.
  const cgroup = options.containment?.kind === "cgroup"
    ? newCommandCgroup(options.containment.base)
    : undefined;
  return {
    program: "bash",
    args: [
      "-c",
      (cgroup === undefined ? UNSANDBOXED_WATCHDOG : commandCgroupPrefix(cgroup)) + prefix +
      BACKGROUND_WRAPPER,
      "tern-process",
      command,
      options.port === undefined ? "" : String(options.port),
      options.token,
    ],
    env: sandboxEnv({ env }),
    cwd: options.cwd,
    confined: false,
    ...(cgroup === undefined ? {} : { afterExit: () => killCommandCgroup(cgroup) }),
  };
}
