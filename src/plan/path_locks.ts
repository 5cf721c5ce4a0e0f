/**
 * One async mutex per file path, so plan nodes running at the same time never write the same
 * file at once: the composition root wraps each write/edit tool call of a plan node in
 * {@linkcode PathLocks.withLock}.
 */
import { resolve } from "../core/path.ts";

/** Async mutexes keyed by normalised absolute path; FIFO; idle paths take no memory. */
export class PathLocks {
  /** Held paths → the wake-ups of those waiting for them, first come first served. */
  #held = new Map<string, Array<() => void>>();

  /**
   * Runs `fn` once no other call holds `path` (made absolute against the current directory and
   * normalised, without resolving symlinks), holding it until `fn` settles, whether it resolves
   * or throws. Callers waiting on the same path run in the order they called.
   */
  async withLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
    const key = resolve(path);
    const waiters = this.#held.get(key);
    if (waiters) await new Promise<void>((wake) => waiters.push(wake));
    else this.#held.set(key, []);
    try {
      return await fn();
    } finally {
      this.#release(key);
    }
  }

  /** How many paths are held now (for tests and diagnostics). */
  get size(): number {
    return this.#held.size;
  }

  #release(key: string): void {
    const next = this.#held.get(key)?.shift();
    if (next) next();
    else this.#held.delete(key);
  }
}
