/** Assertions on a provider's event stream, shared by the provider tests. */
import assert from "node:assert/strict";
import type { ErrorEvent } from "../../src/llm/errors.ts";
import type { StreamEvent } from "../../src/llm/types.ts";

/** The final event of a successful stream. */
export type DoneEvent = Extract<StreamEvent, { type: "done" }>;

/** The last event, which must be `done`. */
export function done(events: StreamEvent[]): DoneEvent {
  const last = events.at(-1);
  assert.equal(last?.type, "done", `expected done, got ${JSON.stringify(last)}`);
  return last as DoneEvent;
}

/** The last event, which must be `error`. */
export function lastError(events: StreamEvent[]): ErrorEvent {
  const last = events.at(-1);
  assert.equal(last?.type, "error", `expected an error, got ${JSON.stringify(last)}`);
  return last as ErrorEvent;
}
