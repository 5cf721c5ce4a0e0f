/**
 * Code index workers: threads that read, hash, chunk and prepare files (code_index_worker.ts,
 * prepareIndexFile()) while the indexing thread walks the workspace and writes the index. A
 * full index spends most of its time reading, in tree-sitter and in the word splitting; spread
 * over the machine's cores it runs that much sooner.
 *
 * A worker reads with the same verified reader as the indexing thread and writes nothing. It
 * runs with the permissions of the process: Deno lets a Worker narrow them only with an unstable
 * flag whose absence ends the process.
 */
import { startThread } from "../core/packaging.ts";
import type { FileRequest, FileResult } from "./code_index_file.ts";

/** The most worker threads a pool starts, whatever the core count. */
const MAX_THREADS = 4;

/** What a worker is sent: one file request. */
export interface PoolRequest {
  id: number;
  request: FileRequest;
}

/**
 * What a worker is sent first: a shared counter it adds one to after each answer, so that the
 * indexing thread knows how busy it is without waiting for its event loop to take the answers.
 */
export interface PoolInit {
  answered: SharedArrayBuffer;
}

/** A worker's answer to one request. */
export type PoolReply = { id: number; result: FileResult } | { id: number; error: string };

interface Pending {
  path: string;
  resolve(result: FileResult): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Requests sent, and (shared with the worker) requests it answered. */
  sent: number;
  answered: Int32Array;
  failed?: string;
}

/**
 * The worker threads a pool starts by default: one per core but the indexing thread's own (it
 * prepares files too while the workers are busy), at least one, at most {@link MAX_THREADS}.
 */
export function defaultThreads(): number {
  return Math.max(1, Math.min((navigator.hardwareConcurrency || 1) - 1, MAX_THREADS));
}

/** A set of code index worker threads; each request goes to the one with the fewest waiting. */
export class IndexPool {
  #threads: Thread[];
  #next = 0;
  #closed = false;

  private constructor(threads: Thread[]) {
    this.#threads = threads;
  }

  /**
   * Starts `threads` workers. Throws when not one can be started (the caller then prepares the
   * files in its own thread).
   */
  static start(threads = defaultThreads()): IndexPool {
    const started: Thread[] = [];
    const pool = new IndexPool(started);
    try {
      for (let i = 0; i < threads; i++) started.push(pool.#startThread());
    } catch (error) {
      if (started.length === 0) throw error;
    }
    return pool;
  }

  /**
   * How many requests are sent and not yet answered, as the workers count them: up to date even
   * while this thread has not yet taken their answers.
   */
  get waiting(): number {
    return this.#threads.reduce((sum, thread) => sum + waitingOn(thread), 0);
  }

  /** How many worker threads can take requests. */
  get threads(): number {
    return this.#threads.filter((thread) => thread.failed === undefined).length;
  }

  /**
   * What a worker made of the file `request` names (prepareIndexFile()). Rejects when the
   * worker failed or the pool was closed.
   */
  prepare(request: FileRequest): Promise<FileResult> {
    const { path } = request;
    const thread = this.#pick();
    if (thread === undefined) {
      return Promise.reject(
        new Error(`Cannot index "${path}": ${this.#closed ? "the pool is closed" : this.#why()}`),
      );
    }
    const id = this.#next++;
    return new Promise<FileResult>((resolve, reject) => {
      thread.pending.set(id, { path, resolve, reject });
      const message: PoolRequest = { id, request };
      thread.worker.postMessage(message);
      thread.sent++;
    });
  }

  /** Ends every worker; requests still waiting are rejected. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const thread of this.#threads) this.#fail(thread, "the pool was closed");
  }

  #startThread(): Thread {
    const answered = new SharedArrayBuffer(4);
    const thread: Thread = {
      worker: startThread("index-worker"),
      pending: new Map(),
      sent: 0,
      answered: new Int32Array(answered),
    };
    const init: PoolInit = { answered };
    thread.worker.postMessage(init);
    thread.worker.onmessage = (event: MessageEvent) => {
      const reply = event.data as PoolReply;
      const pending = thread.pending.get(reply.id);
      if (!pending) return;
      thread.pending.delete(reply.id);
      if ("result" in reply) pending.resolve(reply.result);
      else pending.reject(new Error(`Cannot index "${pending.path}": ${reply.error}`));
    };
    thread.worker.onerror = (event: ErrorEvent) => {
      // Handled here: an unhandled worker error would end the whole process.
      event.preventDefault();
      this.#fail(thread, `the index worker failed: ${event.message}`);
    };
    return thread;
  }

  #pick(): Thread | undefined {
    if (this.#closed) return undefined;
    let best: Thread | undefined;
    for (const thread of this.#threads) {
      if (thread.failed !== undefined) continue;
      if (!best || waitingOn(thread) < waitingOn(best)) best = thread;
    }
    return best;
  }

  #why(): string {
    return this.#threads.find((thread) => thread.failed !== undefined)?.failed ??
      "no index worker runs";
  }

  #fail(thread: Thread, why: string): void {
    thread.failed ??= why;
    thread.worker.terminate();
    for (const pending of thread.pending.values()) {
      pending.reject(new Error(`Cannot index "${pending.path}": ${why}`));
    }
    thread.pending.clear();
  }
}

function waitingOn(thread: Thread): number {
  return thread.failed === undefined ? thread.sent - Atomics.load(thread.answered, 0) : 0;
}
