/**
 * The Worker backend: the worker is a `Worker` thread with narrowed `deno.permissions`, for
 * where no deno executable exists (a compiled binary).
 *
 * Deno 2.9.6 accepts `deno.permissions` only with `--unstable-worker-options` (given to
 * `deno run`, or to `deno compile` for a binary). Without it, creating the Worker makes Deno
 * print "Unstable API 'Worker.deno.permissions'" and end the whole process with code 70, which
 * no code can catch — so pick this backend only where the flag is known to be on.
 *
 * Differences from the process backend: the thread shares the process's environment (an env
 * grant of "all" sees everything, API keys included), its working directory (tools use the
 * absolute workspace path they are given) and its `DENO_AUDIT_PERMISSIONS` setting (no audit
 * file per worker). A Worker that calls `Deno.exit()` ends silently; its calls end only by
 * timeout or cancel.
 */
import type { Grants } from "../types.ts";
import type { Channel, ChannelListener } from "./channel.ts";
import { entryModuleUrl, withRuntimeNeeds, workerPermissions } from "./flags.ts";
import { type HostMessage, parseChildMessage } from "./protocol.ts";

/** Deno colours the messages of uncaught errors. */
const ANSI_STYLE = new RegExp(String.fromCharCode(27) + "\\[[0-9;]*m", "g");

/** How to start a Worker thread. */
export interface WorkerChannelOptions {
  grants: Grants;
  /** The handler module (exports `handleToolCall`). */
  handlerUrl: URL;
}

/** `WorkerOptions` with Deno's unstable `deno.permissions`. */
interface DenoWorkerOptions extends WorkerOptions {
  deno: { permissions: ReturnType<typeof workerPermissions> };
}

/**
 * Starts a Worker confined to `grants` (plus what its own code needs to load). Throws when
 * the Worker cannot be created, for example when the grants exceed this process's own.
 */
export function startWorkerChannel(
  options: WorkerChannelOptions,
  listener: ChannelListener,
): Channel {
  const workerOptions: DenoWorkerOptions = {
    type: "module",
    name: "tern-tool-worker",
    deno: { permissions: workerPermissions(withRuntimeNeeds(options.grants)) },
  };
  const worker = new Worker(entryModuleUrl(options.handlerUrl, "worker"), workerOptions);
  let end: (why: string) => void = () => {};
  const ended = new Promise<string>((resolve) => end = resolve);
  let gone = false;
  const finish = (why: string) => {
    if (gone) return;
    gone = true;
    worker.terminate();
    end(why);
  };
  worker.onmessage = (event: MessageEvent) => {
    const message = parseChildMessage(event.data);
    if (message !== null) listener(message);
  };
  worker.onerror = (event: ErrorEvent) => {
    // Handled here: an unhandled worker error would end the main process too.
    event.preventDefault();
    finish(`failed: ${event.message.replace(ANSI_STYLE, "")}`);
  };
  return {
    pid: null,
    ended,
    send(message: HostMessage) {
      if (gone) return;
      try {
        worker.postMessage(message);
      } catch (error) {
        throw new TypeError(`Cannot send to the tool worker: ${String(error)}`, { cause: error });
      }
    },
    async stop() {
      // A thread cannot be asked to wrap up; calls are drained before stop() is called.
      finish("was stopped");
      await ended;
    },
  };
}
