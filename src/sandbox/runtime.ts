/**
 * The sandbox of one run: the compiled profile, the warm tool worker confined to its grants,
 * the shell runner (bubblewrap) built from the same grants, a private tmp directory, and what
 * request_permissions added. `explain()` reports exactly what starts, so `tern sandbox explain`
 * and reality cannot drift apart.
 */
import { basename, dirname, isInside, join, resolve } from "../core/path.ts";
import type { CustomProfile } from "../config/schema.ts";
import type { Observation } from "../core/observation.ts";
import { guardHostPrograms, hostProgram } from "../core/host_programs.ts";
import {
  bwrapArgs,
  bwrapProgram,
  isAbsentOrEmptyDir,
  KERNEL_WRITABLE,
  launchArgv,
  probeBwrap,
  sandboxEnv,
} from "./bwrap.ts";
import { cgroupJoin, DEFAULT_LIMITS, type ResourceLimits } from "./limits.ts";
import { makeGitDirFolders } from "./git_dir_folders.ts";
import { ProcessSupervisor } from "./background.ts";
import {
  type BackgroundLaunch,
  type BackgroundLauncher,
  sandboxedLaunch,
  sandboxedServerLaunch,
  unsandboxedLaunch,
} from "./background_launch.ts";
import {
  type HostFileChange,
  hostFileChanges,
  type HostFileSnapshot,
  snapshotHostFiles,
  workspacePathDirs,
} from "./persistence.ts";
import {
  inheritedRunCgroup,
  makeRunCgroup,
  removeStaleRunCgroups,
  type RunCgroup,
  runCgroupPrefix,
} from "./run_cgroup.ts";
import { makePrivateTmp, removeStaleTmp } from "./private_tmp.ts";
import { compileProfile, type SandboxProfile, widenGrants } from "./profiles.ts";
import { homeView, passwdHome } from "./home_view.ts";
import { HomeTokenCopies } from "./home_tokens.ts";
import { FolderListings } from "./folder_listings.ts";
import { hostPrivatePaths, privateView, takeWarmHostPrivatePaths } from "./host_private.ts";
import {
  gitDirsUnder,
  hostSocketLocations,
  type MissingGitDir,
  SandboxViewError,
  secretLocations,
} from "./protected_paths.ts";
import { type DeniedPaths, findDeniedPaths, type PathDenials } from "./denied_paths.ts";
import { refusedCalls, seccompFile } from "./seccomp.ts";
import { createBwrapRunner, createUnsandboxedRunner, shellEnv } from "./shell_runner.ts";
import { findContainment } from "./containment.ts";
import { networkEnv, unpassableReason } from "./shell_env.ts";
import { makeMountPoints, warmKey, warmLaunch, warmServerPath, WarmSlot } from "./warm_shell.ts";
import { GuardMarks, guardNotesDir, removeLeftGuards } from "./guard_marks.ts";
import { proxiedHosts, runProxied, withProxy } from "./net_shell.ts";
import { hookScriptsShown, withHookScripts } from "./hooks/scripts_folder.ts";
import type { Grants, ShellPlan, ShellResult, ShellRunner } from "./types.ts";
import { WorkerHost, type WorkerWrap } from "./worker/host.ts";
import { defaultConfigPath } from "./worker/flags.ts";
import { ownCodePaths } from "./own_code.ts";
import { packaging } from "../core/packaging.ts";
import { denoDirOf, sourceRootOf, workerBwrapArgv } from "./worker/view.ts";
import { systemRipgrep } from "./worker/ripgrep.ts";

const FULL_ACCESS: Grants = { read: "all", write: "all", net: "all", env: "all", run: "all" };

/** The confined tool worker as the gate uses it. */
export interface ToolWorker {
  call(tool: string, args: unknown, options: {
    signal: AbortSignal;
    /** Time limit in milliseconds: past it the call is TIMEOUT and its worker killed. */
    timeoutMs?: number;
    onUpdate?: (text: string) => void;
    /** Folders besides the workspace the file tools may use (the granted read/write paths). */
    roots?: { read: readonly string[]; write: readonly string[] };
  }): Promise<Observation>;
  /** The Deno permission-audit file of the current worker run, if any. */
  readonly auditPath: string | null;
  /** Starts the worker ahead of its first call (a no-op once it runs); rejects with why not. */
  start(): Promise<void>;
}

/** How shell commands run: in bubblewrap, with no sandbox by choice, or not at all safely. */
export type ShellKind = "bwrap" | "none" | "unavailable";

/**
 * How the tool worker is confined: `"bwrap"`, in the shell commands' bubblewrap view narrowed
 * to the workspace and the grants, plus its Deno flags and the tools' path checks; `"deno"`,
 * by its Deno flags and the path checks only (no bubblewrap: a rename race can get past the
 * checks); `"none"`, with full access (`--no-sandbox`, or a profile without a sandbox).
 */
export type WorkerKind = "bwrap" | "deno" | "none";

export interface SandboxRuntime {
  readonly workspace: string;
  /** The person's home folder (a real path), when known. */
  readonly home?: string;
  /**
   * tern's own folder (a real path): configuration, trust, sessions. Never writable by tools
   * or commands, whatever was granted, and hidden from commands.
   */
  readonly ternHome: string;
  /** The profile with any grants request_permissions added. */
  readonly profile: SandboxProfile;
  /** Runs the file tools; with `--no-sandbox` it has full access. */
  readonly worker?: ToolWorker;
  /** Runs shell commands as `shellKind` says. */
  readonly shell: ShellRunner;
  /** The limits of each shell command and file tool call. */
  readonly limits: ResourceLimits;
  /** Runs shell commands with no sandbox: only for grants a person or reviewer approved. */
  readonly unsandboxedShell: ShellRunner;
  readonly shellKind: ShellKind;
  /** Why shell commands are not in bubblewrap, when they are not. */
  readonly shellNote?: string;
  /** How the tool worker is confined. */
  readonly workerKind: WorkerKind;
  /**
   * The run's background processes (`bash` `run_in_background`), each in a one-shot sandbox of
   * its own; `close()` stops them.
   */
  readonly processes: ProcessSupervisor;
  /**
   * How to start the program `argv` (an absolute path) as a long-running protocol server whose
   * stdin and stdout are its protocol (a language server): in bubblewrap confined exactly as a
   * shell command is (`shellKind` `bwrap`), or plainly in `cwd` (`none`). The caller spawns it
   * in a process group of its own and calls `release` once it exited. Throws when commands
   * cannot be confined here (`unavailable`).
   */
  serverLaunch(argv: readonly string[], options: { cwd: string }): Promise<BackgroundLaunch>;
  /** A shell command that may have changed the files ran: rescan for `.git` folders next time. */
  shellTreeChanged(): void;
  /**
   * Opens the warm shell ahead of the first command (bubblewrap sets up while the model's call
   * arrives), where commands can have one. A run that never runs a command never opens it.
   * Never throws.
   */
  prewarmShell(): void;
  /**
   * Starts watching the workspace files that run code on the host later (`persistence.ts`,
   * and new `.git` folders anywhere in the tree); the function returned says what changed
   * since. Cheap: about 60 `lstat` calls each side, plus the plan's `.git` scan when a command
   * dropped the plan. Never throws.
   */
  watchHostFiles(): () => Promise<HostFileChange[]>;
  /**
   * What background processes changed among the watched files since the last watched call
   * ended (or since the last time this was asked), then forgotten: for the turn's end, when no
   * call follows to notice it. None when no process ran. Never throws.
   */
  hostFilesMeanwhile(): HostFileChange[];
  /**
   * Replaces the grants added on top of the profile; restarts the worker when they change.
   * With `verify`, waits until the new worker has started. Throws with nothing changed when
   * they cannot be applied: RangeError when the worker's flags cannot carry an entry, Error
   * when (with `verify`) the new worker does not start.
   */
  setExtraGrants(extra: Partial<Grants>, options?: { verify?: boolean }): Promise<void>;
  /** Exactly what starts: the worker's command line and bubblewrap's arguments. */
  explain(): SandboxExplanation;
  /**
   * The run's cgroups, once made (null where none could be), for a subagent to join; absent
   * from a runtime that makes none.
   */
  runCgroup?(): Promise<RunCgroup | null>;
  /** Stops the worker and removes the private tmp directory. */
  close(): Promise<void>;
}

export interface SandboxExplanation {
  profile: string;
  grants: Grants;
  /** The worker's full command line (`deno run <flags> child.ts <handler>`), or none. */
  worker: string[] | null;
  /**
   * What starts for one command: `bash -c <launcher> tern-sandbox <filter> bwrap <args> bash
   * -c <command>` with `<command>` as the command (see `launchArgv`), or null without bwrap.
   */
  bwrap: string[] | null;
  /**
   * What starts the warm shell that runs commands one after another (see warm_shell.ts), with
   * `<server>` for the copy of bash it runs; null when commands run in one-shot sandboxes only.
   */
  warmBwrap: string[] | null;
  /**
   * The names of the variables bubblewrap is started with and passes on to the command (their
   * values stay off every command line), or null without bwrap.
   */
  bwrapEnv: string[] | null;
  shellKind: ShellKind;
  shellNote?: string;
  workerKind: WorkerKind;
  /** How the tool worker is confined, in words completing "The worker …". */
  workerNote: string;
  /** The file tools' private tmp directory (it differs from run to run). */
  tmp: string;
  /** The limits of each shell command (its `/tmp` is a tmpfs of `tmpMb`). */
  limits: ResourceLimits;
  /** What confines shell commands besides the mounts' writable roots; null without bwrap. */
  layers: SandboxLayers | null;
}

/** The confinement layers of shell commands, for `tern sandbox explain` and `tern doctor`. */
export interface SandboxLayers {
  /**
   * The home folder (masked), the entries of it shown read-only that exist here, and the
   * configuration files among them shown without the tokens written in them (home_tokens.ts).
   */
  home: { folder: string | null; shown: string[]; withoutTokens: string[] };
  /** tern's own home, hidden. */
  ternHome: string;
  /** The seccomp filter file, or null when none could be written (then none applies). */
  seccomp: { file: string | null; refused: string[] };
  /** True when tern runs as uid 0. */
  root: boolean;
  /** Root-only host paths hidden (only searched as root). */
  rootOnlyHidden: number;
  /** Kernel interfaces bound read-only. */
  kernelReadOnly: string[];
  /**
   * What network commands have: `none` (a network namespace of their own with loopback only),
   * `hosts` (only these, through a filtering proxy started for each command) or `host` (the
   * host's network, shared).
   */
  network: { kind: "none" } | { kind: "hosts"; hosts: string[] } | { kind: "host" };
  /**
   * The caps of the run's cgroups, where they could be made: `processes` for a pids cgroup (its
   * limit counts all the run's processes), `memoryMb` for a memory cgroup (all their memory).
   */
  cgroups: { processes?: number; memoryMb?: number };
  /**
   * What the person's deny rules with a path took out of the view: paths hidden, paths made
   * read-only, and whether the search saw the whole workspace. Null without such rules.
   */
  denied: { hidden: number; readOnly: number; complete: boolean } | null;
  /** `.git` folders kept read-only, and the names a command cannot create where absent. */
  guards: { readOnlyGit: number; absent: string[]; ownCode: string[] };
  /**
   * The folder of tern's home the person's own hooks see read-only (`<ternHome>/hooks`), or
   * null when they see none of it (no such folder, or the workspace or a writable root shares
   * a path with tern's home). A project's hooks never see it.
   */
  hookScripts: string | null;
}

export interface CreateSandboxOptions {
  workspace: string;
  profile: string;
  custom?: Readonly<Record<string, CustomProfile>>;
  noSandbox: boolean;
  home?: string;
  /**
   * The home folder of tern's user account, masked whole (default: the one /etc/passwd gives
   * this process's uid): HOME may be unset or name another folder.
   */
  accountHome?: string;
  ternHome: string;
  /** The environment shell commands may draw on (filtered by `shellEnv`). */
  env: Readonly<Record<string, string>>;
  /**
   * Where a variable a profile or a grant names is read (default: `env`): tern's own
   * environment, so the person's value passes, unless `unpassableReason` holds for it.
   */
  grantedEnv?: (name: string) => string | undefined;
  /** The tools' worker handler module. */
  handlerUrl: URL;
  /** Directory for the worker's Deno permission-audit files; none when absent. */
  auditDir?: string;
  /** Names this run's files (Deno audit files are `deno-<runId>-worker-<n>.jsonl`). */
  runId: string;
  /** Start the worker now rather than on the first call. */
  warm?: boolean;
  /**
   * Stops an opening no longer wanted (the run ended before its first tool call): it removes
   * what it made, kills a worker still starting, and rejects.
   */
  signal?: AbortSignal;
  /** The limits of each shell command; default `DEFAULT_LIMITS`. */
  limits?: ResourceLimits;
  /**
   * More home-folder paths shell commands may see, from the person's own config
   * (`sandbox.homeAllow`); see `homeView`.
   */
  homeAllow?: readonly string[];
  /**
   * What the person's deny rules with a path keep from the tools (`pathDenials`): what they match
   * in the workspace is hidden from (or read-only to) commands and the tool worker too.
   */
  denials?: PathDenials | null;
  /** The bubblewrap executable (default `bwrap` on PATH); tests point it at a missing one. */
  bwrapPath?: string;
  /**
   * Directories the file tools may also read, whatever the profile (the session's saved tool
   * outputs). Shell commands do not see them.
   */
  extraRead?: string[];
}

/**
 * Builds the sandbox for one run.
 * @throws {RangeError} for an unknown profile name.
 */
export async function createSandbox(options: CreateSandboxOptions): Promise<SandboxRuntime> {
  const privateTmp = await makePrivateTmp();
  const tmp = privateTmp.path;
  const accountHome = options.accountHome ?? passwdHome(Deno.uid());
  // A search for root-only files started ahead (prewarm.ts) is this sandbox's to use or end.
  const warmRootOnly = takeWarmHostPrivatePaths();
  // What runs killed before they could clean up left behind goes when this sandbox closes:
  // off the first command's path, where its process and folder reads would compete with it.
  // The close also waits for a prewarmed search this sandbox does not use.
  const swept = () => Promise.all([sweepStale(tmp), warmRootOnly?.catch(() => {})]).then(() => {});
  let base: SandboxProfile;
  try {
    base = compileProfile(options.profile, {
      workspace: options.workspace,
      tmp,
      home: options.home,
      custom: options.custom,
    });
    if (options.extraRead?.length) {
      base = { ...base, grants: widenGrants(base.grants, { read: options.extraRead }) };
    }
  } catch (error) {
    await privateTmp.remove();
    await swept();
    throw error;
  }
  let profile = base;
  // The person's deny rules by path, held by the view too (null without such rules).
  const denials = options.denials ?? null;
  const home = options.home === undefined ? undefined : realOrResolved(options.home);
  const ternHome = realOrResolved(options.ternHome);
  // Deno's flags compare paths as written: deny the folder by its name and by its real path.
  const ternPaths = [...new Set([options.ternHome, ternHome])];
  // tern's own code, Deno and Deno's cache: read-only to every tool wherever they lie (see
  // own_code.ts). Only those inside a writable root need anything: the rest is read-only already.
  const ownCode = options.noSandbox ? [] : ownCodePaths(options.env);
  const wantsBwrap = !options.noSandbox && base.shell === "bwrap";
  // The view's one-time work runs beside the probe (each waits on another process or disk).
  // The filter file is read by the launcher before each command: never where a command can
  // write (tern's home inside a writable root), else a command could loosen the next one's.
  const writableRoots = base.grants.write === "all" ? ["/"] : base.grants.write;
  // Nothing tern starts on the host comes from a folder commands may write (a workspace folder
  // on the person's PATH): see host_programs.ts. (All of `/` writable leaves nothing to keep.)
  if (!options.noSandbox) {
    guardHostPrograms([options.workspace, ...writableRoots.filter((root) => root !== "/")]);
  }
  const filterDir = writableRoots.some((root) => holdsAny(root, ternPaths))
    ? await Deno.makeTempDir({ prefix: "tern-seccomp-" })
    : options.ternHome;
  const privateFilterDir = filterDir !== options.ternHome ? filterDir : undefined;
  const viewWork = wantsBwrap
    ? Promise.all([seccompFile(filterDir), warmRootOnly ?? hostPrivatePaths()])
    : Promise.resolve([null, []] as const);
  const limits = options.limits ?? DEFAULT_LIMITS;
  // As root RLIMIT_NPROC does not hold: the run's pids cgroup does, and its memory cgroup caps
  // the memory of all its commands together, where they can be made. Made beside the probe (a
  // process of its own); the plan waits for them, and they go again when bubblewrap turns out
  // not to run.
  // A subagent's sandbox joins its parent's (one cap for the parent and all its children).
  const inherited = inheritedRunCgroup();
  const pidsStarted = !wantsBwrap || !isDir("/run")
    ? Promise.resolve(null)
    : inherited !== undefined
    ? Promise.resolve(inherited)
    : makeRunCgroup(runCgroupPrefix(dirname(tmp)) + basename(tmp), {
      processes: limits.processes,
      memoryBytes: limits.totalMemoryMb * 1024 * 1024,
    });
  let probe: Awaited<ReturnType<typeof probeBwrap>> | undefined;
  let seccompPath: string | null;
  let rootOnlyFound: readonly string[];
  try {
    probe = wantsBwrap ? await probeBwrap({ bwrapPath: options.bwrapPath }) : undefined;
    [seccompPath, rootOnlyFound] = await viewWork;
  } catch (error) {
    await (await pidsStarted)?.remove();
    throw error;
  }
  if (options.signal?.aborted) {
    await (await pidsStarted)?.remove();
    await privateTmp.remove();
    await swept();
    if (privateFilterDir) await Deno.remove(privateFilterDir, { recursive: true }).catch(() => {});
    throw new Error("The sandbox was closed while it opened");
  }
  const shellKind: ShellKind = !wantsBwrap ? "none" : probe?.ok ? "bwrap" : "unavailable";
  const shellNote = options.noSandbox
    ? "--no-sandbox: shell commands run without bubblewrap"
    : base.shell === "none"
    ? `profile "${base.name}" runs shell commands without a sandbox`
    : probe && !probe.ok
    ? `bubblewrap cannot run (${probe.reason}): each shell command needs explicit approval`
    : undefined;

  const env = shellEnv(options.env);
  if (shellKind !== "bwrap") await (await pidsStarted)?.remove();
  const pidsMade = shellKind === "bwrap" ? pidsStarted : Promise.resolve(null);
  // Outside the sandbox a command has the network anyway: give it the proxy and CA variables.
  // Beside a sandbox, a command approved to run without it finds no program where sandboxed
  // commands could have put one: its PATH is without the folders they may write (the profile's
  // and the grants' as they are when it starts; bin/tern already took out the workspace's).
  const hostEnv = () => {
    const outside = { ...env, ...networkEnv(options.env) };
    const write = profile.grants.write;
    if (shellKind !== "bwrap" || write === "all" || outside.PATH === undefined) return outside;
    const roots = write.flatMap((root) => [root, realOrNull(root) ?? root]);
    const kept = outside.PATH.split(":").filter((dir) => {
      const real = realOrNull(dir) ?? dir;
      return dir !== "" && !roots.some((root) => isInside(root, dir) || isInside(root, real));
    });
    return { ...outside, PATH: kept.join(":") };
  };
  const unsandboxedShell = createUnsandboxedRunner(hostEnv, { limits });
  const seccomp = shellKind === "bwrap" ? seccompPath : null;
  // Root's own files (searched once per sandbox, only as root: see host_private.ts).
  const rootOnly = shellKind === "bwrap" ? rootOnlyFound : [];
  // The real path of each writable root of the profile as the sandbox opened (see boundRoots).
  const openedReal = new Map(
    (base.grants.write === "all" ? [] : base.grants.write).map((root) => [root, realOrNull(root)]),
  );
  // The run's cgroups once a plan waited for them (what `explain` shows).
  let cgroup: RunCgroup | null = null;
  // What the person's deny rules took out of the last plan's view (null without such rules).
  let deniedByRules: DeniedPaths | null = null;
  // The .git search runs again after every command that may have written: folders unchanged
  // since the last are not read again (folder_listings.ts).
  const gitListings = new FolderListings();
  const planFor = async (): Promise<ShellPlan> => {
    const pids = cgroup = await pidsMade;
    const writable = profile.grants.write === "all" ? ["/"] : profile.grants.write;
    const bound = outsideTernHome(
      boundRoots(writable.filter((path) => path !== tmp), openedReal),
      ternPaths,
    );
    const roots = [...bound.keys()];
    const writableReal = Object.fromEntries(
      [...bound].flatMap(([root, real]) => real === null ? [] : [[root, real]]),
    );
    // A folder that does not exist cannot be hidden: where a writable root holds tern's home,
    // make it first, so a command cannot create tern's config there for the next run.
    if (roots.some((root) => holdsAny(root, ternPaths))) {
      await Deno.mkdir(ternHome, { recursive: true, mode: 0o700 }).catch(() => {});
    }
    const granted = profile.grants.env === "all" ? [] : profile.grants.env;
    const valueOf = options.grantedEnv ?? ((name: string) => options.env[name]);
    const passed = Object.fromEntries(granted.flatMap((name) => {
      const value = valueOf(name);
      return value === undefined || unpassableReason(name, value) !== undefined
        ? []
        : [[name, value]];
    }));
    const view = viewOf({ ...options, accountHome }, roots, profile.grants.read, rootOnly);
    const denied = denials === null ? null : await findDeniedPaths(options.workspace, denials);
    deniedByRules = denied;
    // A folder the `.git` search cannot list could hold a repository a command would write:
    // hidden whole (a writable root itself cannot be: commands wait until it is listable).
    const unlistable: string[] = [];
    const missing: MissingGitDir[] = [];
    const bareRepositories: string[] = [];
    const gitDirs = await gitDirsUnder(roots.filter((r) => r !== "/"), {
      unlistable,
      missing,
      bare: bareRepositories,
      cache: gitListings,
    });
    // A folder a `.git` file points at that is missing is made, empty (git reads the pointer
    // as it did, naming no repository), so that it is read-only for commands and the file tools
    // like any repository folder (each part from inside the last: see git_dir_folders.ts).
    // Where it cannot be made, commands are kept from making its first missing part.
    const missingGitDirs: string[] = [];
    for (const { folder, guard } of missing) {
      if (await makeGitDirFolders(guard, folder)) gitDirs.push(folder);
      else missingGitDirs.push(guard);
    }
    const unlistableRoot = unlistable.find((dir) => roots.includes(dir));
    if (unlistableRoot !== undefined) {
      throw new SandboxViewError(
        `Cannot protect the .git folders in ${unlistableRoot}: tern cannot list it. Make it ` +
          `readable (chmod u+rx "${unlistableRoot}"); commands wait until then`,
      );
    }
    return {
      cwd: options.workspace,
      writable: roots,
      writableReal,
      readOnly: [
        ...gitDirs,
        ...ownCodeIn(ownCode, roots),
        ...view.readOnly,
        ...denied?.readOnly ?? [],
      ],
      ...(bareRepositories.length === 0 ? {} : { bareRepositories }),
      guarded: [
        ...roots.filter((root) => root !== "/").flatMap((root) => [
          join(root, ".tern"),
          join(root, ".git"),
        ]),
        ...missingGitDirs,
      ],
      masked: view.masked,
      revealed: [options.workspace, ...(profile.grants.read === "all" ? [] : profile.grants.read)],
      visible: view.visible,
      // tern's home (config, trust, sessions) is never visible, not even to a workspace in it.
      hidden: [...view.hidden, ...denied?.hidden ?? [], ...unlistable],
      // What the searches found is used only while it is still where they found it.
      ...(denied === null && unlistable.length === 0
        ? {}
        : { pinned: [...denied?.hidden ?? [], ...denied?.readOnly ?? [], ...unlistable] }),
      ...(seccomp === null ? {} : { seccomp }),
      limits,
      ...(pids ? { cgroupFiles: pids.joinFiles } : {}),
      // Host grants go through a proxy per command (see net_shell.ts): only "all" shares the
      // host network.
      network: profile.grants.net === "all",
      env: { ...env, ...(profile.grants.net === "all" ? networkEnv(options.env) : {}), ...passed },
    };
  };
  const layersOf = (built: ShellPlan): SandboxLayers => ({
    home: {
      folder: options.home ?? null,
      shown: (built.visible ?? []).filter((path) => exists(path)),
      withoutTokens: Object.keys(homeCopies.for(home, built.writable)),
    },
    ternHome: options.ternHome,
    seccomp: { file: built.seccomp ?? null, refused: refusedCalls() },
    root: Deno.uid() === 0,
    rootOnlyHidden: rootOnly.length,
    kernelReadOnly: [...KERNEL_WRITABLE],
    network: networkLayer(built.network, proxiedHosts(profile.grants.net)),
    cgroups: built.cgroupFiles === undefined || cgroup === null ? {} : {
      ...(cgroup.processes === undefined ? {} : { processes: cgroup.processes }),
      ...(cgroup.memoryBytes === undefined
        ? {}
        : { memoryMb: Math.floor(cgroup.memoryBytes / 1024 / 1024) }),
    },
    denied: deniedByRules === null ? null : {
      hidden: deniedByRules.hidden.length,
      readOnly: deniedByRules.readOnly.length,
      complete: deniedByRules.complete,
    },
    guards: {
      readOnlyGit: gitDirsOf(built).length,
      absent: [...new Set((built.guarded ?? []).map((path) => basename(path)))],
      ownCode: ownCodeIn(ownCode, built.writable),
    },
    hookScripts: hookScriptsShown(built, options.ternHome),
  });
  // The plan (with its scan for .git folders, slow in a big tree) is kept until a
  // command that may have changed the tree ran (`shellTreeChanged()`): then it is rebuilt, so a
  // repository cloned a moment ago gets its .git protected.
  let plan: Promise<ShellPlan> | undefined;
  /** The plan last built: what `explain()` shows. */
  let lastPlan: ShellPlan | undefined;
  // Called when a new plan hides or protects other paths than the last (the worker's view).
  let viewChanged: (() => void) | undefined;
  // Why the last plan could not be made, if it could not.
  let planError: unknown;
  const currentPlan = () =>
    plan ??= planFor().then((built) => {
      const changed = lastPlan !== undefined && denials !== null &&
        (!sameList(lastPlan.hidden, built.hidden) || !sameList(lastPlan.readOnly, built.readOnly));
      lastPlan = built;
      planError = undefined;
      if (changed) viewChanged?.();
      return built;
    }, (error) => {
      // A plan that could not be made (a view that cannot hold what it must) is tried again
      // next time; until then commands and file tools fail with its reason.
      plan = undefined;
      planError = error;
      // No view is known to hold any more: the worker stops taking calls in the last one.
      if (lastPlan !== undefined) viewChanged?.();
      lastPlan = undefined;
      throw error;
    });
  // A guard's mount point (an empty folder bubblewrap made, kept while the warm shell stands on
  // it) is tern's own: no command can put anything in it.
  const withoutGuards = (changes: HostFileChange[]) => {
    const guarded = lastPlan?.guarded ?? [];
    return changes.filter((change) =>
      !(guarded.includes(change.path) && isAbsentOrEmptyDir(change.path))
    );
  };
  // Guards (see ShellPlan.guarded) leave empty folders on the host as mount points: removed
  // once no command runs, if they are still empty and were absent when the command started.
  let running = 0;
  const placeholders = new Set<string>();
  // Each noted before a sandbox stands on it, so that those a tern killed by SIGKILL left
  // behind go at a later start (see guard_marks.ts), before the first is made.
  const guardNotes = guardNotesDir(dirname(tmp));
  const guardMarks = new GuardMarks(guardNotes);
  const leftGuards = shellKind === "bwrap"
    // Not waited for long: a sweep skipped is done at a later start.
    ? removeLeftGuards(guardNotes, removeEmptyDirs, SWEEP_WAIT_MS)
    : Promise.resolve();
  /** Makes the absent ones of `guarded` and notes all (guard_marks.ts); returns those made. */
  const standOn = async (guarded: readonly string[]): Promise<string[]> => {
    await leftGuards;
    return await guardMarks.standOn(guarded, makeMountPoints);
  };
  // The proxies' sockets: a folder of tern's own under the host's /tmp (commands see a private
  // /tmp), made at the first command with host grants.
  let socketDir: Promise<string> | undefined;
  let proxied = 0;
  // The removal under way: a command starts only after it, so no guard it mounts is removed.
  let removing: Promise<void> | undefined;
  // One sandbox kept for commands one after another (see warm_shell.ts), opened as soon as
  // this sandbox is (below): it sets up while the model answers.
  const warm = new WarmSlot(filterDir, options.bwrapPath, {
    makeMountPoints: async (paths) => void await standOn(paths),
  });
  // Copies of the home configuration files that hold tokens, beside the filter (where commands
  // cannot write), looked at before every sandbox: the person may edit a file at any time, and
  // the kept plan is rebuilt only after a command that may have changed the tree.
  const homeCopies = new HomeTokenCopies(filterDir);
  const viewNow = async (): Promise<ShellPlan> => {
    // A repository a background process moved or removed since the plan was made: a new
    // search finds where it went (a view without it is refused, see bwrap.ts), rather than
    // every command failing until the turn's end.
    if (
      plan !== undefined && lastPlan !== undefined &&
      gitDirsOf(lastPlan).some((path) =>
        !lastPlan!.writable.includes(dirname(path)) && isGone(path)
      )
    ) {
      plan = undefined;
    }
    const built = await currentPlan();
    return { ...built, replaced: homeCopies.for(home, built.writable) };
  };
  /** Waits for a removal under way, notes the guards a sandbox will mount and counts it. */
  const enter = async (): Promise<ShellPlan> => {
    const built = await viewNow();
    while (removing !== undefined) await removing;
    running++;
    let made: string[];
    try {
      made = await standOn(built.guarded ?? []);
    } catch (error) {
      // No sandbox stands on them: the next command's leave() may remove what is left.
      running--;
      throw error;
    }
    warm.lost(made);
    for (const path of made) placeholders.add(path);
    return built;
  };
  /** Once no sandbox runs, removes the guards' mount points left empty. */
  const leave = async () => {
    for (const path of warm.released()) placeholders.add(path);
    if (--running === 0) {
      // Only folders tern made: a person's own empty `.git` the warm shell stood on stays.
      const made = [...placeholders].filter((path) => !warm.holds(path) && guardMarks.made(path));
      placeholders.clear();
      if (made.length > 0) {
        removing = guardMarks.remove(made, removeEmptyDirs).finally(() => {
          removing = undefined;
        });
        await removing;
      }
    }
  };
  const bwrapShell: ShellRunner = async (command, run) => {
    const planned = await enter();
    try {
      const scripts = run.hookScripts ? withHookScripts(planned, ternHome) : planned;
      const built = run.replaced === undefined
        ? scripts
        : { ...scripts, replaced: { ...scripts.replaced, ...run.replaced } };
      const runIn = (plan: ShellPlan) =>
        createBwrapRunner(plan, { bwrapPath: options.bwrapPath })(command, run);
      const hosts = proxiedHosts(profile.grants.net);
      if (hosts === null) {
        const oneShot = run.hookScripts || run.replaced !== undefined;
        const warmed = oneShot ? null : await warm.run(built, command, run);
        return await withOomNote(warmed ?? await runIn(built));
      }
      socketDir ??= Deno.makeTempDir({ prefix: "tern-proxy-" });
      return await withOomNote(
        await runProxied(built, hosts, runIn, {
          socketDir: await socketDir,
          name: String(++proxied),
        }),
      );
    } finally {
      await leave();
    }
  };
  // The memory cgroup's kills seen so far: a command that failed after a new one is told why.
  let oomKillsSeen = 0;
  const withOomNote = async (result: ShellResult): Promise<ShellResult> => {
    if (result.code === 0 || cgroup?.memoryBytes === undefined) return result;
    const kills = await cgroup.oomKills();
    if (kills <= oomKillsSeen) return result;
    oomKillsSeen = kills;
    const mb = Math.floor(cgroup.memoryBytes / 1024 / 1024);
    const note = `\n[tern: the run's commands (background ones included) reached their memory ` +
      `cap of ${mb} MiB (limits.totalMemoryMb): the kernel killed one of their processes]`;
    return { ...result, output: result.output + note, totalChars: result.totalChars + note.length };
  };
  const shell = shellKind === "bwrap" ? bwrapShell : unsandboxedShell;
  // Background processes: each in a one-shot sandbox of its own, counted as running (its
  // guards' mount points stay) until it ends.
  const launchUnsandboxed: BackgroundLauncher = async (command, launch) =>
    unsandboxedLaunch(hostEnv(), command, {
      ...launch,
      limits,
      containment: await findContainment(),
    });
  /** The host files as the last watched call left them, while background processes run. */
  let betweenCalls: HostFileSnapshot | undefined;
  // The person's PATH folders in the workspace (a `.venv/bin`): a program a command leaves
  // there runs when the person types its name, so a change is told like one to a git hook.
  const pathDirs = workspacePathDirs(options.workspace, options.env.PATH);
  const processes = new ProcessSupervisor({
    launch: shellKind !== "bwrap" ? launchUnsandboxed : async (command, launch) => {
      const built = await enter();
      try {
        const started = sandboxedLaunch(built, command, {
          ...launch,
          bwrapPath: options.bwrapPath,
        });
        return { ...started, release: () => void leave().catch(() => {}) };
      } catch (error) {
        await leave();
        throw error;
      }
    },
    launchUnsandboxed,
  });
  const serverLaunch = async (
    argv: readonly string[],
    launch: { cwd: string },
  ): Promise<BackgroundLaunch> => {
    if (shellKind === "unavailable") {
      throw new Error(`Cannot start "${argv[0]}": commands cannot be confined here`);
    }
    if (shellKind !== "bwrap") {
      const [program, ...args] = argv;
      return {
        program,
        args,
        env: sandboxEnv({ env: { ...env, ...networkEnv(options.env) } }),
        cwd: launch.cwd,
        confined: false,
      };
    }
    const built = await enter();
    try {
      const started = sandboxedServerLaunch(built, argv, {
        cwd: launch.cwd,
        bwrapPath: options.bwrapPath,
      });
      return { ...started, release: () => void leave().catch(() => {}) };
    } catch (error) {
      await leave();
      throw error;
    }
  };

  // The worker runs in the shell commands' view (narrowed to its grants) whenever shell
  // commands run in bubblewrap: a rename race can then reach only what the view shows.
  const workerKind: WorkerKind = options.noSandbox || base.shell === "none"
    ? "none"
    : shellKind === "bwrap"
    ? "bwrap"
    : "deno";
  const bwrapPath = options.bwrapPath ?? bwrapProgram();
  const denoDir = denoDirOf(options.env) ?? "/nonexistent";
  // The single-file build is its own source: the worker runs that file.
  const packaged = packaging();
  const sourceRoot = packaged.kind === "single-file"
    ? packaged.file
    : sourceRootOf(defaultConfigPath());
  const wrap: WorkerWrap = (argv, { grants, auditPath, starting }) => {
    if (lastPlan === undefined) throw planError ?? new Error("has no sandbox plan yet");
    if (starting && auditPath !== null) createEmptyFile(auditPath);
    // A folder made after the worker started would not be in its view (saved tool results).
    if (starting) { for (const dir of options.extraRead ?? []) makeFolder(dir); }
    const needs = { grants, denoPath: argv[0], denoDir, sourceRoot, auditFile: auditPath };
    const confined = [bwrapPath, ...workerBwrapArgv(lastPlan, needs, argv)];
    // The worker starts in the run's cgroups, as commands do: the run's memory and process
    // caps hold for it too (bash joins them by builtin writes, then becomes bubblewrap).
    const joins = cgroupJoin(lastPlan.cgroupFiles ?? []);
    return joins === ""
      ? confined
      : [hostProgram("bash"), "-c", `${joins}exec "$@"`, "tern-worker", ...confined];
  };
  // A plan that cannot be made fails each command and file-tool call with its reason instead.
  if (workerKind === "bwrap") await currentPlan().catch(() => {});
  // The worker may start the system's ripgrep only in its bubblewrap view, which limits what
  // ripgrep reaches as it limits the worker (ripgrep.ts). Not after a compiled binary: its worker
  // gives up only the kinds of access it is granted nothing of (ungrantedKinds), so a grant of
  // one program would leave it every program.
  const ripgrep = workerKind === "bwrap" && packaged.kind !== "compiled"
    ? () => systemRipgrep(options.env?.PATH ?? Deno.env.get("PATH") ?? "")
    : undefined;
  // With --no-sandbox the tools still run in a worker (tern's own process keeps its narrow
  // flags), but one with every permission but FFI.
  const worker = new WorkerHost({
    ...(workerKind === "bwrap" ? { wrap } : {}),
    ...(ripgrep === undefined ? {} : { ripgrep }),
    grants: options.noSandbox ? FULL_ACCESS : base.grants,
    // All of tern's own code, not only what the profile's roots hold now: a write grant made
    // later (request_permissions) restarts the worker with these same denials.
    denyWrite: options.noSandbox ? [] : [...ternPaths, ...ownCodeIn(ownCode, ["/"])],
    env: { ...options.env },
    handlerUrl: options.handlerUrl,
    workspace: options.workspace,
    auditFile: options.auditDir === undefined
      ? undefined
      : (run) => join(options.auditDir!, `deno-${options.runId}-worker-${run}.jsonl`),
  });
  // A worker that fails to start reports it on the first call, with the reason.
  if (options.warm) worker.start().catch(() => {});
  // The worker's view is made from the plan when it starts: once the person's deny rules match
  // other paths (a command made or removed some), the next file-tool call gets a new worker.
  if (workerKind === "bwrap") viewChanged = () => worker.restart(worker.grants);

  if (shellKind === "bwrap") await currentPlan().catch(() => {});
  if (options.signal?.aborted) {
    await worker.close();
    await privateTmp.remove();
    await (await pidsMade)?.remove();
    await swept();
    if (privateFilterDir) await Deno.remove(privateFilterDir, { recursive: true }).catch(() => {});
    throw new Error("The sandbox was closed while it opened");
  }
  // The warm shell opens only when asked (`prewarmShell`) or by the first command: a sandbox
  // given up while it opened leaves none behind, and a run of file tools alone starts none.
  let prewarming: Promise<void> = Promise.resolve();
  return {
    workspace: options.workspace,
    ...(home !== undefined ? { home } : {}),
    ternHome,
    get profile() {
      return profile;
    },
    worker,
    shell,
    limits,
    unsandboxedShell,
    shellKind,
    shellNote,
    workerKind,
    runCgroup: () => pidsMade,
    async setExtraGrants(next, { verify = false } = {}) {
      const widened = { ...base, grants: widenGrants(base.grants, next) };
      // A folder granted for writing holds no program tern starts on the host from now on.
      if (!options.noSandbox && widened.grants.write !== "all") {
        guardHostPrograms(widened.grants.write);
      }
      const restarts = !options.noSandbox &&
        JSON.stringify(widened.grants) !== JSON.stringify(profile.grants);
      const before = profile;
      // restart() checks the flags before it changes anything: a throw here leaves all as it
      // was. The next worker starts lazily, in the view of the plan rebuilt below.
      if (restarts) worker.restart(widened.grants);
      profile = widened;
      plan = undefined;
      try {
        // The plan first: a worker started in its view has the granted paths.
        if (shellKind === "bwrap") await currentPlan();
        if (restarts && verify) await worker.start();
      } catch (error) {
        profile = before;
        plan = undefined;
        if (restarts) worker.restart(before.grants);
        if (shellKind === "bwrap") await currentPlan().catch(() => {});
        throw error;
      }
    },
    processes,
    serverLaunch,
    shellTreeChanged() {
      plan = undefined;
    },
    prewarmShell() {
      if (shellKind !== "bwrap" || proxiedHosts(profile.grants.net) !== null) return;
      prewarming = prewarming.then(() => viewNow()).then((built) => warm.prewarm(built))
        .catch(() => {});
    },
    watchHostFiles() {
      const gitBefore = lastPlan ? gitDirsOf(lastPlan) : [];
      const before = snapshotHostFiles(options.workspace, gitBefore, pathDirs);
      // What background processes changed since the last watched call ended counts too.
      const meanwhile = betweenCalls === undefined ? [] : hostFileChanges(betweenCalls, before);
      return async () => {
        // A command that may have changed the tree dropped the plan: rebuild it now, so a
        // repository it made anywhere in the workspace shows (and is protected from now on).
        // A plan that cannot be made now (its reason fails the next command) leaves the last
        // plan's `.git` list: the changes are still reported and audited.
        const gitAfter = shellKind === "bwrap" && plan === undefined
          ? await currentPlan().then(gitDirsOf, () => gitBefore)
          : gitBefore;
        const after = snapshotHostFiles(options.workspace, gitAfter, pathDirs);
        betweenCalls = processes.running() > 0 ? after : undefined;
        return withoutGuards([...meanwhile, ...hostFileChanges(before, after)]);
      };
    },
    hostFilesMeanwhile() {
      if (betweenCalls === undefined) return [];
      const now = snapshotHostFiles(
        options.workspace,
        lastPlan ? gitDirsOf(lastPlan) : [],
        pathDirs,
      );
      const changes = hostFileChanges(betweenCalls, now);
      betweenCalls = processes.running() > 0 ? now : undefined;
      return withoutGuards(changes);
    },
    explain() {
      return {
        profile: profile.name,
        grants: profile.grants,
        worker: worker.flags,
        bwrap: shellKind === "bwrap" && lastPlan
          ? launchLine(shownPlan(lastPlan, profile.grants.net), options.bwrapPath)
          : null,
        warmBwrap: shellKind === "bwrap" && lastPlan && warmKey(lastPlan) !== null &&
            proxiedHosts(profile.grants.net) === null
          ? warmLine(lastPlan, filterDir, options.bwrapPath)
          : null,
        bwrapEnv: shellKind === "bwrap" && lastPlan
          ? Object.keys(sandboxEnv(shownPlan(lastPlan, profile.grants.net)))
          : null,
        shellKind,
        ...(shellNote ? { shellNote } : {}),
        workerKind,
        workerNote: WORKER_NOTES[workerKind],
        tmp,
        limits,
        layers: shellKind === "bwrap" && lastPlan ? layersOf(lastPlan) : null,
      };
    },
    async close() {
      await processes.close();
      await prewarming;
      await leftGuards;
      const held = (await warm.close()).filter((path) => guardMarks.made(path));
      await guardMarks.remove(held, removeEmptyDirs);
      await guardMarks.close();
      // Another tern's, ended while this one stood on its mount points, go now.
      if (shellKind === "bwrap") await removeLeftGuards(guardNotes, removeEmptyDirs);
      if (socketDir) await Deno.remove(await socketDir, { recursive: true }).catch(() => {});
      if (privateFilterDir) {
        await Deno.remove(privateFilterDir, { recursive: true }).catch(() => {});
      }
      await worker.close();
      await privateTmp.remove();
      await (await pidsMade)?.remove();
      await swept();
    },
  };
}

/**
 * The writable roots that still are what was granted. bubblewrap's `--bind` follows symlinks,
 * so a granted folder inside the workspace that a command replaced by a link (`mv a old; ln -s
 * ~ a`) would bind the link's target read-write, and the hidden paths (tern's home, secrets)
 * compared with the root as written would be shown. A root is kept when it is its own real path
 * now (grants are stored as real paths), or resolves as it did when the sandbox opened (the
 * profile's roots, which a person or the launcher named); every other one is left out, so what
 * lies there is read-only to the command. A root that does not exist is kept (nothing to
 * follow). Checked each time a plan is built; the roots kept, each with its real path now.
 */
export function boundRoots(
  roots: readonly string[],
  openedReal: ReadonlyMap<string, string | null>,
): Map<string, string | null> {
  const kept = new Map<string, string | null>();
  for (const root of roots) {
    const real = realOrNull(root);
    if (real === null || real === root || real === openedReal.get(root)) kept.set(root, real);
  }
  return kept;
}

/**
 * `roots` (as {@linkcode boundRoots} keeps them) without each that is tern's home or lies
 * inside it, by the path as written or its real path: nothing there is ever writable, and what
 * lies there stays hidden with the rest of tern's home (a workspace there included).
 * `ternPaths` holds tern's home as written and its real path.
 */
function outsideTernHome(
  roots: Map<string, string | null>,
  ternPaths: readonly string[],
): Map<string, string | null> {
  const inHome = (path: string | null) =>
    path !== null && ternPaths.some((home) => isInside(home, path));
  return new Map([...roots].filter(([root, real]) => !inHome(root) && !inHome(real)));
}

/** True when `root`, as written or by its real path, is one of `paths` or holds one. */
function holdsAny(root: string, paths: readonly string[]): boolean {
  const real = realOrResolved(root);
  return paths.some((path) => isInside(root, path) || isInside(real, path));
}

function realOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

function realOrResolved(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return resolve(path);
  }
}

const WORKER_NOTES: Record<WorkerKind, string> = {
  bwrap: "runs in bubblewrap (the shell commands' view, showing only the workspace, the " +
    "granted folders and what Deno needs), with its Deno flags and path checks",
  deno: "runs with its Deno flags and path checks only (no bubblewrap): a concurrent rename " +
    "(a folder swapped for a symlink) can get a file tool past its checks",
  none: "runs with full access (no sandbox)",
};

/** Creates folder `path` (private to the user) if it is missing; never throws. */
function makeFolder(path: string): void {
  try {
    Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch {
    // Not creatable: the worker will not see it, as if it were not granted.
  }
}

/** Creates `path` (and its folder) as an empty file, so bubblewrap can bind it. */
function createEmptyFile(path: string): void {
  Deno.mkdirSync(dirname(path), { recursive: true });
  Deno.writeFileSync(path, new Uint8Array());
}

/**
 * Removes the private tmp folders of runs that died without cleaning up, then the cgroups
 * whose tmp folder is gone. Never throws.
 */
async function sweepStale(own: string): Promise<void> {
  await removeStaleTmp(own);
  await removeStaleRunCgroups(runCgroupPrefix(dirname(own)), dirname(own));
}

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * What shell commands see besides the writable roots: the home folder masked but for its
 * allowlist; tern's home, the workspace's `.tern`, secret locations and host sockets hidden;
 * root-only host files hidden when tern runs as root (see `host_private.ts`).
 */
function viewOf(
  options: Pick<
    CreateSandboxOptions,
    "home" | "accountHome" | "homeAllow" | "ternHome" | "env" | "workspace"
  >,
  roots: readonly string[],
  read: Grants["read"],
  rootOnlyPaths: readonly string[],
): Pick<ShellPlan, "readOnly" | "hidden"> & { masked: string[]; visible: string[] } {
  const home = homeView(options.home, {
    allow: options.homeAllow,
    // Read grants inside a writable root are bound read-write anyway.
    readGrants: read === "all"
      ? []
      : read.filter((path) => !roots.some((root) => isInside(root, path))),
    ternHome: options.ternHome,
    accountHome: options.accountHome,
  });
  const shown = [...roots, options.workspace, ...(options.home ? [options.home] : [])];
  const rootOnly = privateView(rootOnlyPaths, shown);
  return {
    readOnly: [join(options.workspace, ".tern")],
    masked: [...home.masked, ...rootOnly.masked],
    visible: home.visible,
    hidden: [
      options.ternHome,
      ...home.masked.flatMap((masked) => secretLocations(masked)),
      ...hostSocketLocations(options.env),
      ...rootOnly.hidden,
    ],
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

function networkLayer(shared: boolean, hosts: readonly string[] | null): SandboxLayers["network"] {
  if (shared) return { kind: "host" };
  return hosts === null ? { kind: "none" } : { kind: "hosts", hosts: [...hosts] };
}

/**
 * The paths of `ownCode` that lie in one of `roots` (as written or by the root's real path),
 * without those inside another of them (its mount covers them).
 */
function ownCodeIn(ownCode: readonly string[], roots: readonly string[]): string[] {
  const all = [...new Set([...roots, ...roots.map(realOrResolved)])];
  const found = ownCode.filter((path) => all.some((root) => isInside(root, path)));
  return found.filter((path) => !found.some((outer) => outer !== path && isInside(outer, path)));
}

/**
 * Removes the empty folders `paths` with `rmdir` (which leaves a folder that is not empty):
 * this process may not write the workspace (bin/_env.sh), so `Deno.remove` would fail there.
 * Never throws.
 */
/** How long the opening's sweep of ended terns' mount points waits for the notes' lock. */
const SWEEP_WAIT_MS = 2_000;

async function removeEmptyDirs(paths: readonly string[]): Promise<void> {
  try {
    await new Deno.Command(hostProgram("rmdir"), {
      args: ["--", ...paths],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
  } catch {
    // Left for the next run's sweep.
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * `plan` as a command runs it under `net`: with host grants, with its proxy's forwarder and
 * variables (the socket, which differs from command to command, shown as `<proxy-socket>`).
 */
function shownPlan(plan: ShellPlan, net: Grants["net"]): ShellPlan {
  const hosts = proxiedHosts(net);
  return hosts === null ? plan : withProxy(plan, hosts, "<proxy-socket>");
}

function warmLine(plan: ShellPlan, dir: string, bwrapPath: string | undefined): string[] {
  const launch = warmLaunch(plan, warmServerPath(dir), bwrapPath);
  return [launch.program, ...launch.args];
}

function launchLine(plan: ShellPlan, bwrapPath: string | undefined): string[] {
  const launch = launchArgv(plan, bwrapArgs(plan, "<command>"), bwrapPath, { liveness: true });
  return [launch.program, ...launch.args];
}

/** True when nothing is at `path` (not even a link). */
function isGone(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return false;
  } catch (error) {
    return error instanceof Deno.errors.NotFound;
  }
}

/** The `.git` folders (and files) and the bare repositories a plan protects. */
function gitDirsOf(plan: ShellPlan): string[] {
  return plan.readOnly.filter((path) =>
    basename(path) === ".git" || plan.bareRepositories?.includes(path)
  );
}
