/**
 * A timer that does not load Node's. Deno's global `setTimeout` and `clearTimeout` are Node's:
 * their first use loads Node's compatibility layer (its timers, async hooks, errors and
 * inspect modules), milliseconds of CPU that a run's first bash round paid before the model's
 * reply was even read. `AbortSignal.timeout()` runs on Deno's own timers.
 *
 * Unlike `setTimeout`, such a timer does not keep the process alive: use it beside what does
 * (a child process being waited for, a request or stream being read).
 */

/** A pending call of {@linkcode after}. */
export interface Timer {
  /** The call will not happen (if it has not yet). Idempotent. */
  cancel(): void;
}

/** The longest delay a timer holds (2^31 - 1 ms, about 24.8 days); longer ones fire then. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** Calls `fn` once, `ms` milliseconds from now (0 for a negative or NaN `ms`), unless cancelled. */
export function after(ms: number, fn: () => void): Timer {
  const delay = Number.isNaN(ms) ? 0 : Math.floor(Math.min(Math.max(0, ms), MAX_DELAY_MS));
  const signal = AbortSignal.timeout(delay);
  let cancelled = false;
  const fire = () => {
    if (!cancelled) fn();
  };
  signal.addEventListener("abort", fire, { once: true });
  return {
    cancel() {
      cancelled = true;
      signal.removeEventListener("abort", fire);
    },
  };
}
