/** A tool worker handler stuck in a loop for every call: a stand-in for a catastrophic regex. */
import type { Observation } from "../../../src/core/observation.ts";

export function handleToolCall(): Promise<Observation> {
  for (;;) {
    // Spins: the worker's event loop never comes back.
  }
}
