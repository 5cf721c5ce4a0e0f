/**
 * The child side of the tool worker: receives calls, runs them through the handler module and
 * answers with one result per call. It runs inside the confined process (or Worker), so
 * everything here is subject to the profile's permissions.
 *
 * The host starts it through an entry module (see `entryModuleUrl` in flags.ts) that imports
 * this file and the handler statically and calls {@linkcode serveStdio} or
 * {@linkcode serveWorkerScope}.
 */
import type { Observation } from "../../core/observation.ts";
import {
  type ChildMessage,
  encodeLine,
  parseHostMessage,
  readJsonLines,
  type ToolCallHandler,
  type ToolCallRequest,
} from "./protocol.ts";

/** Runs calls concurrently; a cancel aborts the signal of the call it names. */
class Dispatcher {
  #handle: ToolCallHandler;
  #send: (message: ChildMessage) => void;
  #running = new Map<number, { controller: AbortController; done: Promise<void> }>();

  constructor(handle: ToolCallHandler, send: (message: ChildMessage) => void) {
    this.#handle = handle;
    this.#send = send;
  }

  receive(value: unknown): void {
    const message = parseHostMessage(value);
    if (message === null) return;
    if (message.type === "cancel") {
      this.#running.get(message.id)?.controller.abort();
      return;
    }
    if (this.#running.has(message.id)) return;
    const { id, tool, args, workspace, roots } = message;
    const controller = new AbortController();
    const request: ToolCallRequest = { tool, args, workspace, ...(roots ? { roots } : {}) };
    const done = this.#run(id, request, controller.signal)
      .then((observation) => this.#answer(id, tool, observation))
      .finally(() => this.#running.delete(id));
    this.#running.set(id, { controller, done });
  }

  /** Aborts every call in flight. */
  abortAll(): void {
    for (const call of this.#running.values()) call.controller.abort();
  }

  /** Resolves once every call received so far has answered. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) {
      await Promise.allSettled([...this.#running.values()].map((call) => call.done));
    }
  }

  #answer(id: number, tool: string, observation: Observation): void {
    try {
      this.#send({ id, type: "result", observation });
    } catch (error) {
      const message = `Tool "${tool}" gave an answer that cannot be sent: ${String(error)}`;
      this.#send({
        id,
        type: "result",
        observation: { status: "ERROR", code: "EXECUTION_FAILED", message },
      });
    }
  }

  async #run(id: number, request: ToolCallRequest, signal: AbortSignal): Promise<Observation> {
    const update = (text: string) => {
      if (!signal.aborted) this.#send({ id, type: "update", text });
    };
    try {
      return await this.#handle(request, { signal, update });
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      const message = `Tool "${request.tool}" failed: ${detail}`;
      return { status: "ERROR", code: "EXECUTION_FAILED", message };
    }
  }
}

/** Console methods that print to stdout, which carries the protocol. */
const STDOUT_CONSOLE = ["log", "info", "debug", "dir", "dirxml", "table"] as const;

/** How long calls may take to answer their cancel once stdin has ended. */
const EXIT_GRACE_MS = 2000;

/**
 * Serves calls as JSON lines on stdin/stdout. Console output that would go to stdout goes to
 * stderr instead. When stdin ends (the host stopped the worker, or died), the calls in flight
 * are cancelled and get up to {@linkcode EXIT_GRACE_MS} to answer; then the process exits,
 * even if a call still hangs.
 */
export async function serveStdio(handle: ToolCallHandler): Promise<void> {
  for (const name of STDOUT_CONSOLE) console[name] = console.error;
  const writer = Deno.stdout.writable.getWriter();
  // Writes queue up in order on the writer; a failed write means the host is gone.
  const send = (message: ChildMessage) => void writer.write(encodeLine(message)).catch(() => {});
  const dispatcher = new Dispatcher(handle, send);
  send({ type: "ready" });
  for await (const value of readJsonLines(Deno.stdin.readable)) dispatcher.receive(value);
  dispatcher.abortAll();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, EXIT_GRACE_MS));
  await Promise.race([dispatcher.idle(), grace]);
  clearTimeout(timer);
  await writer.close().catch(() => {});
  Deno.exit(0);
}

/** The parts of a worker's global scope the child uses. */
interface WorkerScope {
  postMessage(message: unknown): void;
  onmessage: ((event: MessageEvent) => void) | null;
}

/** Serves calls posted to this Worker; answers with `postMessage`. Runs until terminated. */
export function serveWorkerScope(handle: ToolCallHandler): void {
  const scope = globalThis as unknown as WorkerScope;
  const dispatcher = new Dispatcher(handle, (message) => scope.postMessage(message));
  scope.onmessage = (event) => dispatcher.receive(event.data);
  scope.postMessage({ type: "ready" } satisfies ChildMessage);
}
