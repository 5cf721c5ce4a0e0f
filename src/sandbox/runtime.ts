/**
 * The sandbox of one run: the compiled profile, the warm tool worker confined to its grants,
 * the shell runner (bubblewrap) built from the same grants, a private tmp directory, and what
 * request_permissions added. `explain()` reports exactly what starts, so `tern sandbox explain`
 * and reality cannot drift apart.
 */
import { basename, dirname, join } from "node:path";
import type { CustomProfile } from "../config/schema.ts";
import type { Observation } from "../core/observation.ts";
import { bwrapArgs, probeBwrap, sandboxEnv } from "./bwrap.ts";
import { DEFAULT_LIMITS, type ResourceLimits } from "./limits.ts";
import { makePidsCgroup, removeStalePidsCgroups } from "./pids_cgroup.ts";
import { makePrivateTmp, PRIVATE_TMP_PREFIX, removeStaleTmp } from "./private_tmp.ts";
import { compileProfile, grantsAny, type SandboxProfile, widenGrants } from "./profiles.ts";
import { gitDirsUnder, hostSocketLocations, secretLocations } from "./protected_paths.ts";
import { createBwrapRunner, createUnsandboxedRunner, shellEnv } from "./shell_runner.ts";
import type { Grants, ShellPlan, ShellRunner } from "./types.ts";
import { WorkerHost } from "./worker/host.ts";

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
}

/** How shell commands run: in bubblewrap, with no sandbox by choice, or not at all safely. */
export type ShellKind = "bwrap" | "none" | "unavailable";

export interface SandboxRuntime {
  readonly workspace: string;
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
  /** A shell command that may have changed the files ran: rescan for `.git` folders next time. */
  shellTreeChanged(): void;
  /** Replaces the grants added on top of the profile; restarts the worker when they change. */
  setExtraGrants(extra: Partial<Grants>): Promise<void>;
  /** Exactly what starts: the worker's command line and bubblewrap's arguments. */
  explain(): SandboxExplanation;
  /** Stops the worker and removes the private tmp directory. */
  close(): Promise<void>;
}

export interface SandboxExplanation {
  profile: string;
  grants: Grants;
  /** The worker's full command line (`deno run <flags> child.ts <handler>`), or none. */
  worker: string[] | null;
  /** `bwrap <args> bash -c <command>` with `<command>` as the command, or null without bwrap. */
  bwrap: string[] | null;
  /**
   * The names of the variables bubblewrap is started with and passes on to the command (their
   * values stay off every command line), or null without bwrap.
   */
  bwrapEnv: string[] | null;
  shellKind: ShellKind;
  shellNote?: string;
  /** The file tools' private tmp directory (it differs from run to run). */
  tmp: string;
  /** The limits of each shell command (its `/tmp` is a tmpfs of `tmpMb`). */
  limits: ResourceLimits;
}

export interface CreateSandboxOptions {
  workspace: string;
  profile: string;
  custom?: Readonly<Record<string, CustomProfile>>;
  noSandbox: boolean;
  home?: string;
  ternHome: string;
  /** The environment shell commands may draw on (filtered by `shellEnv`). */
  env: Readonly<Record<string, string>>;
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
  // What runs killed before they could clean up left behind goes now, off the start path
  // (close() waits for it).
  const swept = sweepStale(tmp);
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
    await swept;
    throw error;
  }
  let extra: Partial<Grants> = {};
  let profile = base;
  const wantsBwrap = !options.noSandbox && base.shell === "bwrap";
  const probe = wantsBwrap ? await probeBwrap({ bwrapPath: options.bwrapPath }) : undefined;
  if (options.signal?.aborted) {
    await privateTmp.remove();
    await swept;
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
  const limits = options.limits ?? DEFAULT_LIMITS;
  // As root RLIMIT_NPROC does not hold: the run's pids cgroup does, where one can be made.
  // Made while the plan is built; the plan waits for it.
  const pidsMade = shellKind === "bwrap" && isDir("/run")
    ? makePidsCgroup(basename(tmp), limits.processes)
    : Promise.resolve(null);
  const unsandboxedShell = createUnsandboxedRunner(env, { limits });
  const planFor = async (): Promise<ShellPlan> => {
    const pids = await pidsMade;
    const writable = profile.grants.write === "all" ? ["/"] : profile.grants.write;
    const roots = writable.filter((path) => path !== tmp);
    const tern = [join(options.workspace, ".tern"), options.ternHome];
    const granted = profile.grants.env === "all" ? [] : profile.grants.env;
    const passed = Object.fromEntries(
      granted.flatMap((name) => options.env[name] === undefined ? [] : [[name, options.env[name]]]),
    );
    return {
      cwd: options.workspace,
      writable: roots,
      readOnly: [...await gitDirsUnder(roots.filter((r) => r !== "/")), ...tern],
      hidden: [
        ...(options.home ? secretLocations(options.home) : []),
        ...hostSocketLocations(options.env),
      ],
      limits,
      ...(pids ? { pidsFile: pids.procsFile } : {}),
      network: grantsAny(profile.grants.net),
      env: { ...env, ...passed },
    };
  };
  // The plan (with its scan for .git folders, up to ~0.5 s in a big tree) is kept until a
  // command that may have changed the tree ran (`shellTreeChanged()`): then it is rebuilt, so a
  // repository cloned a moment ago gets its .git protected.
  let plan: Promise<ShellPlan> | undefined;
  /** The plan last built: what `explain()` shows. */
  let lastPlan: ShellPlan | undefined;
  const currentPlan = () => plan ??= planFor().then((built) => lastPlan = built);
  const bwrapShell: ShellRunner = async (command, run) =>
    await createBwrapRunner(await currentPlan(), { bwrapPath: options.bwrapPath })(command, run);
  const shell = shellKind === "bwrap" ? bwrapShell : unsandboxedShell;

  // With --no-sandbox the tools still run in a worker (tern's own process keeps its narrow
  // flags), but one with every permission but FFI.
  const worker = new WorkerHost({
    grants: options.noSandbox ? FULL_ACCESS : base.grants,
    env: { ...options.env },
    handlerUrl: options.handlerUrl,
    workspace: options.workspace,
    auditFile: options.auditDir === undefined
      ? undefined
      : (run) => join(options.auditDir!, `deno-${options.runId}-worker-${run}.jsonl`),
  });
  // A worker that fails to start reports it on the first call, with the reason.
  if (options.warm) worker.start().catch(() => {});

  if (shellKind === "bwrap") await currentPlan();
  if (options.signal?.aborted) {
    await worker.close();
    await privateTmp.remove();
    await (await pidsMade)?.remove();
    await swept;
    throw new Error("The sandbox was closed while it opened");
  }
  return {
    workspace: options.workspace,
    get profile() {
      return profile;
    },
    worker,
    shell,
    limits,
    unsandboxedShell,
    shellKind,
    shellNote,
    async setExtraGrants(next) {
      extra = next;
      const widened = { ...base, grants: widenGrants(base.grants, extra) };
      const changed = JSON.stringify(widened.grants) !== JSON.stringify(profile.grants);
      profile = widened;
      if (changed && !options.noSandbox) worker.restart(profile.grants);
      plan = undefined;
      if (shellKind === "bwrap") await currentPlan();
    },
    shellTreeChanged() {
      plan = undefined;
    },
    explain() {
      return {
        profile: profile.name,
        grants: profile.grants,
        worker: worker.flags,
        bwrap: shellKind === "bwrap" && lastPlan
          ? ["bwrap", ...bwrapArgs(lastPlan, "<command>")]
          : null,
        bwrapEnv: shellKind === "bwrap" && lastPlan ? Object.keys(sandboxEnv(lastPlan)) : null,
        shellKind,
        ...(shellNote ? { shellNote } : {}),
        tmp,
        limits,
      };
    },
    async close() {
      await worker.close();
      await privateTmp.remove();
      await (await pidsMade)?.remove();
      await swept;
    },
  };
}

/**
 * Removes the private tmp folders of runs that died without cleaning up, then the pids cgroups
 * whose tmp folder is gone. Never throws.
 */
async function sweepStale(own: string): Promise<void> {
  await removeStaleTmp(own);
  await removeStalePidsCgroups(PRIVATE_TMP_PREFIX, dirname(own));
}

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
