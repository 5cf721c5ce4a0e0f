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

/** What the model is told of spawn_agent (tool_specs.ts shows it, tools.ts runs it). */
export const SPAWN_AGENT_DESCRIPTION =
  "Start a subagent on a self-contained task; it runs in the background with a " +
  "fresh context (it sees only `message`, never this conversation), in this workspace " +
  `and sandbox, with the tools ${CHILD_BASE_TOOLS.join(", ")} plus those named in ` +
  "`tools`. Returns its ids at once; call wait_agent for its result.";

/** What the model is told of wait_agent. */
export const WAIT_AGENT_DESCRIPTION =
  "Wait for the next subagent to finish and get its result (task, ids, status " +
  "and answer). A timeout (default 60000 ms) stops no subagent: wait again later.";
