/**
 * What the parent and the child agree on without the protocol's schemas (src/harness/subagents/
 * protocol.ts, which brings zod): kept apart so that a session that may spawn children loads
 * nothing heavy before its first request.
 */
import { BUILTIN_MANIFEST } from "../../tools/mod.ts";

/** Bumped when a line changes meaning; each side refuses another version. */
export const CHILD_PROTOCOL_VERSION = 1;

/** Tools a child always has (the read-only built-ins that say so); the parent names others. */
export const CHILD_BASE_TOOLS: readonly string[] = BUILTIN_MANIFEST.filter((entry) =>
  entry.subagentBase
).map((entry) => entry.name);
