/**
 * A call's output as it comes (`tool_update` events), paced: at most one event per interval,
 * each with at most the last {@linkcode PROGRESS_MAX_CHARS} characters of what came since the
 * one before. Front ends show a live tail (the TUI) or nothing (ACP); the call's result carries
 * its output. Without it, a command printing gigabytes sent every chunk to every front end: one
 * event per 64 KB chunk, 3 GB to an rpc client in 50 s, all of it written while the client read.
 */

import { after, type Timer } from "../core/timer.ts";

/** The fewest milliseconds between two progress events of one call. */
export const PROGRESS_INTERVAL_MS = 100;
/** The most characters one progress event carries: the end of what came since the last one. */
export const PROGRESS_MAX_CHARS = 64 * 1024;

/** A call's paced progress: `update` for each piece, `flush` before the call's end. */
export interface ProgressUpdates {
  update(text: string): void;
  /** Sends what waits now, and stops the timer. */
  flush(): void;
}

/**
 * Paces `send`: the first piece goes at once, later ones wait for the interval to pass since
 * the last event; of a burst, only its last {@linkcode PROGRESS_MAX_CHARS} characters go, after a
 * line saying how many were left out.
 */
export function progressUpdates(
  send: (text: string) => void,
  intervalMs = PROGRESS_INTERVAL_MS,
): ProgressUpdates {
  let pending = "";
  let skipped = 0;
  let last = -Infinity;
  // Deno's own timer: the global one loads Node's (see core/timer.ts). It does not keep the
  // process alive, which the call it paces does.
  let timer: Timer | undefined;
  const flush = () => {
    timer?.cancel();
    timer = undefined;
    if (pending === "" && skipped === 0) return;
    const text = skipped > 0
      ? `[… ${skipped} characters of output not shown as it came …]\n${pending}`
      : pending;
    pending = "";
    skipped = 0;
    last = performance.now();
    send(text);
  };
  return {
    update(text) {
      pending += text;
      if (pending.length > PROGRESS_MAX_CHARS) {
        skipped += pending.length - PROGRESS_MAX_CHARS;
        pending = pending.slice(-PROGRESS_MAX_CHARS);
      }
      const waited = performance.now() - last;
      if (waited >= intervalMs) flush();
      else timer ??= after(intervalMs - waited, flush);
    },
    flush,
  };
}
