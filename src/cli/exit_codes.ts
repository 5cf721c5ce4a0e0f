/** Process exit codes: 0 for a completed turn, a distinct code for every other exit reason. */
import type { ExitReason } from "../core/events.ts";

/** Bad usage or bad configuration (also the exit code of `ConfigError`). */
export const EXIT_USAGE = 2;
/** An unexpected internal failure. */
export const EXIT_INTERNAL = 1;

const BY_REASON: Record<ExitReason, number> = {
  COMPLETED: 0,
  MAX_ROUNDS: 3,
  REPEATED_FAILURE: 4,
  EMPTY_RESPONSE: 5,
  LENGTH_LIMIT: 6,
  CLIENT_ERROR: 7,
  CANCELLED: 130,
};

export function exitCodeFor(reason: ExitReason): number {
  return BY_REASON[reason];
}
