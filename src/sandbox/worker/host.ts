/**
 * The host side of the confined tool worker: starts a worker lazily, sends it calls, and
 * replaces it when it crashes or does not stop when told to.
 */
import type { Observation } from "../../core/observation.ts";
import type { Grants } from "../types.ts";
import type { Channel, ChannelListener } from "./channel.ts";
import { denoFlags, RIPGREP_ENV, withRuntimeNeeds, workerRunArgs } from "./flags.ts";
import { startProcessChannel, workerEnv } from "./process_channel.ts";
import type { CallRoots } from "./protocol.ts";
import { failed, messageOf, openRun, type Run, sendCall, stopped } from "./run.ts";
import { startWorkerChannel } from "./web_worker.ts";

/** `"process"`: a `deno run` child (default). `"worker"`: a Worker thread (see web_worker.ts). */
export type WorkerBackend = "process" | "worker";

/** Options for {@linkcode WorkerHost}. */
export interface WorkerHostOptions {
  /** What the worker may touch (the profile's grants for this workspace). */
  grants: Grants;
  /**
   * Paths the process backend's worker may never write, whatever the grants (tern's own
   * folder). A Worker thread's permissions cannot deny inside a grant: there the file tools'
   * own checks are the guard.
   */
  denyWrite?: readonly string[];
  /**
   * Programs the process backend's worker may start besides the grants, looked up as each
   * worker starts: ripgrep, where the worker runs in bubblewrap (see ripgrep.ts). Its path
   * reaches the worker in {@linkcode RIPGREP_ENV}.
   */
  ripgrep?: () => string | null;
  /** The handler module; it must export `handleToolCall` (see protocol.ts). */
  handlerUrl: URL;
  /** Absolute real path of the workspace: the default of each call, and the process's cwd. */
  workspace: string;
  backend?: WorkerBackend;
  /** The deno executable for the process backend; default `Deno.execPath()`. */
  denoPath?: string;
  /** The deno.json for the process backend; see `WorkerRunOptions.configPath`. */
  configPath?: string | null;
  /**
   * Where the process backend's Deno writes its permission audit (`DENO_AUDIT_PERMISSIONS`,
   * JSON lines). Deno truncates the file when a worker starts, so a function gets the run
   * number (1, 2, … for each worker started) and should return a new path each time; a
   * plain string is used for every run. Ignored by the Worker backend.
   */
  auditFile?: string | ((run: number) => string);
  /**
   * Most bytes this host's Deno audit files may hold together; default
   * {@linkcode AUDIT_LIMIT_BYTES}. Deno writes a line for every permission check (a grep over
   * a large tree writes several per file), so calls in a loop would fill the disk: once a call
   * ends with the files past the limit, the next call gets a worker that writes none, as do all
   * after it.
   */
  auditLimitBytes?: number;
  /** Where the worker process's environment is picked from; default this process's. */
  env?: Record<string, string>;
  /** How long a cancelled call may take to answer before its worker is killed; default 500 ms. */
  cancelGraceMs?: number;
  /** How long a worker may take to load before it counts as failed; default 30,000 ms. */
  startTimeoutMs?: number;
  /**
   * Wraps the process backend's command line (`[deno, "run", …]`) before each worker starts,
   * e.g. in bubblewrap (see view.ts); it may prepare files (the audit file) and throw when it
   * cannot. Default none: the worker runs as `deno run` with only its Deno flags.
   */
  wrap?: WorkerWrap;
}

/** The default of {@linkcode WorkerHostOptions.auditLimitBytes}: 64 MiB. */
export const AUDIT_LIMIT_BYTES = 64 * 1024 * 1024;

/** What {@linkcode WorkerHostOptions.wrap} gets besides the command line. */
export interface WrapContext {
  /** The grants of the worker about to start. */
  grants: Grants;
  /** Its Deno audit file; null when none. */
  auditPath: string | null;
  /** False when only the command line is wanted (`flags`): prepare nothing. */
  starting: boolean;
}

/** Returns the complete argv that starts `argv` (the worker's `deno run` command line). */
export type WorkerWrap = (argv: readonly string[], context: WrapContext) => string[];

/** Options for {@linkcode WorkerHost.call}. */
export interface WorkerCallOptions {
  signal?: AbortSignal;
  /** Time limit in milliseconds, counted from when the call reaches a ready worker. */
  timeoutMs?: number;
  /** Progress text from the tool (`tool_update`). */
  onUpdate?: (text: string) => void;
  /** The workspace the tool resolves paths against; default the host's. */
  workspace?: string;
  /**
   * Folders besides the workspace the tool may use ({@linkcode CallRoots}); default none.
   * They widen only the tool's own path checks: the worker's Deno flags (the grants) still
   * have to allow them.
   */
  roots?: CallRoots;
}

/**
 * Runs tool calls in a long-lived worker confined to the grants. Starts lazily on the first
 * call (or {@linkcode start}), reuses the worker for every call, runs several calls at once,
 * and replaces a worker that crashed or was killed. Call {@linkcode close} before exiting:
 * an idle worker keeps the event loop alive.
 */
export class WorkerHost {
  #options: WorkerHostOptions;
  #grants: Grants;
  #current: Run | null = null;
  #retired = new Set<Run>();
  #runs = 0;
  #nextId = 0;
  #closed = false;
  /** Bytes the audit files of finished runs hold; null once the limit stopped the audit. */
  #auditBytes: number | null = 0;

  /** Throws RangeError when the grants cannot be expressed as Deno flags. */
  constructor(options: WorkerHostOptions) {
    denoFlags(options.grants, options.denyWrite);
    this.#options = options;
    this.#grants = options.grants;
  }

  /** The grants the next worker starts with. */
  get grants(): Grants {
    return this.#grants;
  }

  /**
   * For the process backend, the exact argv a new worker starts with
   * (`[deno, "run", …flags, entry]`, or the `wrap`ped one); for the Worker backend, the Deno flags its permissions
   * correspond to.
   */
  get flags(): string[] {
    if (this.#backend === "worker") return denoFlags(withRuntimeNeeds(this.#grants));
    // (a Worker thread's permissions have no deny list: its flags show none)
    return this.#argv(this.#auditPathOf(this.#runs + 1), false, this.#options.ripgrep?.() ?? null);
  }

  /** Whether process workers start through {@linkcode WorkerHostOptions.wrap}. */
  get wrapped(): boolean {
    return this.#backend === "process" && this.#options.wrap !== undefined;
  }

  /** The process id of the current worker process; null when none runs (or for Worker threads). */
  get pid(): number | null {
    return this.#current?.channel.pid ?? null;
  }

  /** The audit file of the current worker process, if any. */
  get auditPath(): string | null {
    return this.#current?.auditPath ?? null;
  }

  /** Starts the worker now and waits until it is ready. Throws Error when it cannot start. */
  async start(): Promise<void> {
    try {
      if (this.#closed) throw new Error("is closed");
      await this.#ensureRun().ready;
    } catch (error) {
      throw new Error(`Cannot start the tool worker: it ${messageOf(error)}`, { cause: error });
    }
  }

  /**
   * Runs `tool` with `args` in the worker. Never throws: a worker that cannot start, crashes
   * or is killed gives EXECUTION_FAILED, a time limit TIMEOUT, the signal CANCELLED.
   */
  async call(tool: string, args: unknown, options: WorkerCallOptions = {}): Promise<Observation> {
    if (options.signal?.aborted) return stopped(tool, "cancel");
    // Past the audit's limit, the worker that writes one is replaced before it takes more calls.
    if (this.#auditBytes === null && this.#current?.auditPath) this.restart(this.#grants);
    let run: Run | "aborted";
    try {
      run = await this.#readyRun(options.signal);
    } catch (error) {
      return failed(`Cannot run "${tool}": the tool worker ${messageOf(error)}`);
    }
    if (run === "aborted") return stopped(tool, "cancel");
    const id = ++this.#nextId;
    const workspace = options.workspace ?? this.#options.workspace;
    const observation = await sendCall(run, { ...options, id, tool, args, workspace }, {
      graceMs: this.#grace,
      kill: (run, because) => this.#kill(run, because),
      settled: (run) => {
        if (run.retired && run.pending.size === 0) void run.channel.stop(this.#grace);
      },
    });
    this.#checkAudit(run);
    return observation;
  }

  /**
   * Stops the Deno audit once this host's audit files hold more than the limit: the run that
   * wrote past it takes no further call (the next one replaces it), and no later run writes one
   * (the gate's records then name none).
   */
  #checkAudit(run: Run): void {
    if (run.auditPath === null || this.#auditBytes === null) return;
    const limit = this.#options.auditLimitBytes ?? AUDIT_LIMIT_BYTES;
    if (this.#auditBytes + fileSize(run.auditPath) > limit) this.#auditBytes = null;
  }

  /**
   * Uses `grants` from the next call on: the current worker takes no more calls and stops
   * once its calls have answered; the next call starts a new one with the new flags. Throws
   * RangeError when the grants cannot be expressed as Deno flags.
   */
  restart(grants: Grants): void {
    denoFlags(grants, this.#options.denyWrite);
    this.#grants = grants;
    const run = this.#current;
    this.#current = null;
    if (run !== null) this.#retire(run);
  }

  /**
   * Cancels the calls in flight (they end CANCELLED) and stops every worker, killing what
   * does not stop within the grace (and a worker still starting at once). Resolves once no
   * worker process is left.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const runs = [...this.#retired, ...(this.#current === null ? [] : [this.#current])];
    this.#current = null;
    this.#retired.clear();
    await Promise.all(runs.map(async (run) => {
      run.retired = true;
      for (const call of [...run.pending.values()]) call.stop("close");
      // A worker still loading has nothing to finish: waiting for it to load only to stop it
      // would hold up every exit that comes before the first tool call.
      await run.channel.stop(run.isReady ? this.#grace : 0);
    }));
  }

  get #backend(): WorkerBackend {
    return this.#options.backend ?? "process";
  }

  get #denoPath(): string {
    return this.#options.denoPath ?? Deno.execPath();
  }

  get #grace(): number {
    return this.#options.cancelGraceMs ?? 500;
  }

  #argv(auditPath: string | null, starting: boolean, ripgrep: string | null): string[] {
    const { handlerUrl, configPath, denyWrite, wrap } = this.#options;
    const programs = ripgrep === null ? [] : [ripgrep];
    const argv = [
      this.#denoPath,
      ...workerRunArgs({ grants: this.#grants, handlerUrl, configPath, denyWrite, programs }),
    ];
    return wrap === undefined ? argv : wrap(argv, { grants: this.#grants, auditPath, starting });
  }

  /** A ready worker that takes calls; one replaced while starting is skipped. */
  async #readyRun(signal?: AbortSignal): Promise<Run | "aborted"> {
    for (let attempt = 1;; attempt++) {
      if (this.#closed) throw new Error("is closed");
      const run = this.#ensureRun();
      try {
        if (await raceAbort(run.ready, signal) === "aborted") return "aborted";
      } catch (error) {
        if (attempt === 3) throw error;
        if (run.retired) continue;
        // A worker that died on its own before it was ready gets one more try: Deno itself
        // can fail to start while another process is setting up a fresh module cache.
        if (attempt > 1 || run.killedBecause !== undefined) throw error;
        await run.channel.ended;
        continue;
      }
      if (!run.retired && !run.gone) return run;
      if (attempt === 3) throw new Error("was replaced while the call waited");
    }
  }

  #ensureRun(): Run {
    if (this.#current !== null) return this.#current;
    const number = ++this.#runs;
    const auditPath = this.#auditPathOf(number);
    const run = openRun((listener) => this.#startChannel(auditPath, listener), {
      auditPath,
      startTimeoutMs: this.#options.startTimeoutMs ?? 30_000,
      onStartTimeout: (run) => this.#kill(run, "it did not start in time"),
    });
    run.channel.ended.then((why) => this.#ended(run, why));
    this.#current = run;
    return run;
  }

  /** The audit file of worker run `number`, if any. */
  #auditPathOf(number: number): string | null {
    const { auditFile } = this.#options;
    if (this.#backend === "worker" || auditFile === undefined) return null;
    if (this.#auditBytes === null) return null;
    return typeof auditFile === "string" ? auditFile : auditFile(number);
  }

  #startChannel(auditPath: string | null, listen: ChannelListener): Channel {
    const { handlerUrl, workspace } = this.#options;
    try {
      if (this.#backend === "worker") {
        return startWorkerChannel({ grants: this.#grants, handlerUrl }, listen);
      }
      const source = this.#options.env ?? Deno.env.toObject();
      const env = workerEnv(source, this.#grants, auditPath ?? undefined);
      const ripgrep = this.#options.ripgrep?.() ?? null;
      if (ripgrep !== null) env[RIPGREP_ENV] = ripgrep;
      const [command, ...args] = this.#argv(auditPath, true, ripgrep);
      return startProcessChannel({ denoPath: command, args, cwd: workspace, env }, listen);
    } catch (error) {
      throw new Error(`could not be started: ${messageOf(error)}`, { cause: error });
    }
  }

  #retire(run: Run): void {
    run.retired = true;
    this.#retired.add(run);
    if (run.pending.size === 0) void run.channel.stop(this.#grace);
  }

  #kill(run: Run, because: string): void {
    run.killedBecause ??= because;
    if (this.#current === run) this.#current = null;
    void run.channel.stop(0);
  }

  #ended(run: Run, why: string): void {
    run.gone = true;
    if (run.auditPath !== null && this.#auditBytes !== null) {
      this.#auditBytes += fileSize(run.auditPath);
    }
    if (this.#current === run) this.#current = null;
    this.#retired.delete(run);
    const cause = run.killedBecause === undefined
      ? `the tool worker ${why}`
      : `the tool worker was stopped because ${run.killedBecause}; the call may or may not have taken effect`;
    for (const call of [...run.pending.values()]) call.fail(cause);
  }
}

/** The size of the file at `path`; 0 when it cannot be read. */
function fileSize(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

/** Waits for `promise`, or for `signal` to fire ("aborted"), whichever is first. */
function raceAbort<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T | "aborted"> {
  if (signal === undefined) return promise;
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
