/** The sandbox's shared vocabulary: what a profile grants and how a shell command is confined. */
import type { ResourceLimits } from "./limits.ts";
import type { ProcessGroupResult } from "./process.ts";

/** A permission list: specific entries, or everything. An empty list grants nothing. */
export type GrantList = readonly string[] | "all";

/**
 * What tool code may touch, mapped 1:1 to Deno's `--allow-*` flags. Paths are absolute real
 * paths; net entries are `host` or `host:port`; env entries are variable names. FFI and sys
 * are never granted.
 */
export interface Grants {
  read: GrantList;
  write: GrantList;
  net: GrantList;
  env: GrantList;
  run: GrantList;
}

/** How a shell command runs inside bubblewrap. Every path is an absolute real path. */
export interface ShellPlan {
  /** The command's working directory (the workspace), at the same path inside. */
  cwd: string;
  /** Bound read-write; everything else of `/` is read-only. */
  writable: readonly string[];
  /**
   * The real path of each writable root when the plan was built: a root that resolves elsewhere
   * when bubblewrap starts (a command replaced a folder by a link) is not bound.
   */
  writableReal?: Readonly<Record<string, string>>;
  /**
   * Paths inside writable roots bound read-only again (`.git`, tern's config), by their real
   * path at launch; one that leads out of every writable root by then is left alone.
   */
  readOnly: readonly string[];
  /**
   * The bare repositories among `readOnly` (folders holding `HEAD`, `objects` and `refs`):
   * repositories like the `.git` folders there, though not named `.git`.
   */
  bareRepositories?: readonly string[];
  /**
   * Real paths among `readOnly` and `hidden` found by searching the workspace's content (what
   * the person's deny rules match): each is used only while it is still its own real path, so
   * a command that swaps one for a link cannot choose what tern binds or hides.
   */
  pinned?: readonly string[];
  /** Paths replaced by an empty directory or file (secrets, host sockets). */
  hidden: readonly string[];
  /**
   * Files shown with other content, by their real path: each bound read-only to its copy (the
   * home configuration files that hold tokens, with the tokens taken out: home_tokens.ts).
   */
  replaced?: Readonly<Record<string, string>>;
  /** The command's limits (its `/tmp` is a tmpfs of `tmpMb`); default `DEFAULT_LIMITS`. */
  limits?: ResourceLimits;
  /**
   * The files of the run's cgroups (pids and memory) the sandbox's launcher joins them by,
   * before bubblewrap starts (`tasks` under cgroup v1, `cgroup.procs` under v2: see
   * run_cgroup.ts); none where no cgroup could be made.
   */
  cgroupFiles?: readonly string[];
  /**
   * Folders replaced by an empty tmpfs before the writable roots are bound (the home folder,
   * tern's home, root-only host folders), made read-only once everything inside is mounted:
   * what is not bound back is invisible.
   */
  masked?: readonly string[];
  /** Paths inside `masked` folders bound back read-only (the home allowlist, read grants). */
  visible?: readonly string[];
  /**
   * The seccomp filter file (see `seccomp.ts`); bubblewrap gets it as fd 3 from the launcher
   * (`launchArgv`). None: no filter.
   */
  seccomp?: string;
  /**
   * Paths a command must not create (`.tern` and `.git` of a writable root that has none): an
   * empty read-only folder is mounted there while they are absent or empty. bubblewrap makes
   * the mount point on the host; the runner removes it when no command runs any more.
   */
  guarded?: readonly string[];
  /**
   * Paths under `/tmp` shown read-only over the private `/tmp` (which hides the host's): the
   * workspace (a read-only profile has no writable root to show it) and read grants there.
   * Those outside `/tmp`, absent or inside a writable root are left out.
   */
  revealed?: readonly string[];
  /**
   * Host grants: the command keeps a network namespace of its own (loopback only), and the
   * launcher starts `forwarder` (see `net_forwarder.ts`) in it, outside the sandbox, listening
   * on `127.0.0.1:port` and relaying to tern's filtering proxy (`net_proxy.ts`). The command
   * waits for it before it starts. Only with `network` false.
   */
  proxy?: { port: number; forwarder: readonly string[] };
  /** Share the host network; otherwise the command gets a network namespace of its own. */
  network: boolean;
  /** The complete environment inside; nothing else is inherited. */
  env: Readonly<Record<string, string>>;
}

/** Options for one shell command. */
export interface ShellRunOptions {
  /** Working directory: the workspace. */
  cwd: string;
  /** Stop the command (and everything it started) after this many milliseconds. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Each piece of output as it arrives (already masked for secrets). */
  onOutput?: (text: string) => void;
  /**
   * Show `<ternHome>/hooks` read-only to this command alone, in a sandbox of its own (never the
   * warm shell later commands reuse): only for the person's own hooks (see
   * `hooks/scripts_folder.ts`). Without bubblewrap it changes nothing.
   */
  hookScripts?: boolean;
  /**
   * Files shown with other content to this command alone, in a sandbox of its own (never the
   * warm shell): each real path bound read-only to its copy (a trusted project hook's checked
   * pinned files: see `hooks/frozen_pins.ts`).
   */
  replaced?: Readonly<Record<string, string>>;
}

/**
 * Runs `command` with `bash -c`, confined as the runner was built (bubblewrap, or nothing for
 * `:danger-full-access` and `--no-sandbox`). Throws only when the command cannot be started.
 */
export type ShellRunner = (command: string, options: ShellRunOptions) => Promise<ShellResult>;

/**
 * How a shell command ended: what a process group run reports, and for a command with host
 * grants the hosts (`host:port`) its proxy connected it to and those it refused.
 */
export type ShellResult = ProcessGroupResult & {
  net?: { connected: string[]; refused: string[] };
};
