/**
 * An abortable wait: the pause between retries of a model request, between an MCP server's
 * GET streams, a scripted model's delay. It keeps the process alive while it waits, as
 * `setTimeout` does (timer.ts's `after` does not).
 */

/**
 * Resolves `true` once `ms` milliseconds have passed (at once for `ms` ≤ 0), or `false` as soon
 * as `signal` aborts (at once when it already has).
 */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (!(ms > 0)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(true), ms);
    const onAbort = () => finish(false);
    signal?.addEventListener("abort", onAbort, { once: true });
    function finish(slept: boolean) {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(slept);
    }
  });
}
