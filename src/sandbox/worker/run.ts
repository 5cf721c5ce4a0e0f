/**
 * One worker run: a started worker (channel), its readiness and the calls in flight on it.
 * The host (host.ts) decides when runs start, retire and die; this file moves the messages.
 */
import type { Observation } from "../../core/observation.ts";
import type { Channel, ChannelListener } from "./channel.ts";
import type { CallRoots } from "./protocol.ts";

/** Why the host stopped a call before it answered. */
export type StopReason = "timeout" | "cancel" | "close";

/** A call sent to a worker and not answered yet. */
export interface PendingCall {
  onUpdate?: (text: string) => void;
  /** Ends the call with the worker's answer. */
  settle(observation: Observation): void;
  /** Ends the call because its worker is gone. */
  fail(why: string): void;
  /** Asks the worker to stop the call; the worker is killed if it does not answer in time. */
  stop(reason: StopReason): void;
}

/** One started worker. */
export interface Run {
  channel: Channel;
  auditPath: string | null;
  pending: Map<number, PendingCall>;
  /** Resolves when the worker has loaded its handler; rejects when it ends or takes too long. */
  ready: Promise<void>;
  /** `ready` has resolved. */
  isReady: boolean;
  /** Takes no new calls: replaced by `restart()`, or closed. */
  retired: boolean;
  /** The worker has ended. */
  gone: boolean;
  /** Why the host killed this worker, for the calls it takes down. */
  killedBecause?: string;
}

/**
 * Starts a run on the channel `start` opens. `onStartTimeout` is called when the worker is
 * not ready within `startTimeoutMs` (the host kills it). `ready` rejects with an Error whose
 * message completes "the tool worker …" ("exited with code 1: …").
 */
export function openRun(
  start: (listener: ChannelListener) => Channel,
  options: { auditPath: string | null; startTimeoutMs: number; onStartTimeout(run: Run): void },
): Run {
  let onReady = () => {};
  const channel = start((message) => {
    if (message.type === "ready") onReady();
    else if (message.type === "update") run.pending.get(message.id)?.onUpdate?.(message.text);
    else run.pending.get(message.id)?.settle(message.observation);
  });
  const run: Run = {
    channel,
    auditPath: options.auditPath,
    pending: new Map(),
    ready: Promise.resolve(),
    isReady: false,
    retired: false,
    gone: false,
  };
  run.ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`did not start within ${options.startTimeoutMs} ms`));
      options.onStartTimeout(run);
    }, options.startTimeoutMs);
    onReady = () => {
      clearTimeout(timer);
      run.isReady = true;
      resolve();
    };
    channel.ended.then((why) => {
      clearTimeout(timer);
      reject(new Error(why));
    });
  });
  run.ready.catch(() => {});
  return run;
}

/** One call to send with {@linkcode sendCall}. */
export interface CallRequest {
  id: number;
  tool: string;
  args: unknown;
  workspace: string;
  roots?: CallRoots;
  signal?: AbortSignal;
  timeoutMs?: number;
  onUpdate?: (text: string) => void;
}

/** What {@linkcode sendCall} needs from the host. */
export interface CallHooks {
  /** How long a stopped call may take to answer. */
  graceMs: number;
  /** The call did not answer within the grace after a stop: kill its worker. */
  kill(run: Run, because: string): void;
  /** The call has ended (answered, stopped or failed). */
  settled(run: Run): void;
}

/**
 * Sends `request` on `run` and resolves with its observation. Never rejects. A timeout or an
 * abort sends a cancel; without an answer within the grace the worker is killed and the call
 * ends TIMEOUT or CANCELLED anyway.
 */
export function sendCall(run: Run, request: CallRequest, hooks: CallHooks): Promise<Observation> {
  const { id, tool, signal, timeoutMs } = request;
  return new Promise<Observation>((resolve) => {
    if (run.gone) {
      resolve(failed(`Cannot run "${tool}": the tool worker stopped before the call reached it`));
      return;
    }
    let reason: StopReason | null = null;
    let timeout: ReturnType<typeof setTimeout> | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const finish = (observation: Observation) => {
      if (!run.pending.delete(id)) return;
      clearTimeout(timeout);
      clearTimeout(grace);
      signal?.removeEventListener("abort", onAbort);
      resolve(observation);
      hooks.settled(run);
    };
    const call: PendingCall = {
      onUpdate: request.onUpdate,
      // A call that completed despite the stop keeps its result: it did take effect.
      settle: (observation) =>
        finish(
          reason === null || observation.status === "SUCCEEDED"
            ? observation
            : stopped(tool, reason, timeoutMs),
        ),
      fail: (why) =>
        finish(
          reason === null
            ? failed(`Cannot run "${tool}": ${why}`)
            : stopped(tool, reason, timeoutMs),
        ),
      stop: (why) => {
        if (reason !== null) return;
        reason = why;
        run.channel.send({ id, type: "cancel" });
        grace = setTimeout(() => {
          finish(stopped(tool, why, timeoutMs));
          hooks.kill(run, `"${tool}" did not stop when told to`);
        }, hooks.graceMs);
      },
    };
    const onAbort = () => call.stop("cancel");
    run.pending.set(id, call);
    try {
      const { args, workspace, roots } = request;
      run.channel.send({ id, type: "call", tool, args, workspace, ...(roots ? { roots } : {}) });
    } catch (error) {
      const message = `Invalid arguments for "${tool}": ${messageOf(error)}`;
      finish({ status: "ERROR", code: "INVALID_ARGUMENTS", message });
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    if (timeoutMs !== undefined) timeout = setTimeout(() => call.stop("timeout"), timeoutMs);
  });
}

/** The observation of a call the host stopped. */
export function stopped(tool: string, reason: StopReason, timeoutMs?: number): Observation {
  if (reason === "timeout") {
    const message = `Tool "${tool}" timed out after ${timeoutMs} ms`;
    return { status: "ERROR", code: "TIMEOUT", message };
  }
  const why = reason === "close" ? ": the tool worker was closed" : "";
  return { status: "ERROR", code: "CANCELLED", message: `Tool "${tool}" was cancelled${why}` };
}

/** An EXECUTION_FAILED observation. */
export function failed(message: string): Observation {
  return { status: "ERROR", code: "EXECUTION_FAILED", message };
}

/** The message of an error, or the value in words. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
