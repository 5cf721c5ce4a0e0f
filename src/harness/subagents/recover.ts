/**
 * The outcome of a run spawned before the parent restarted, read from the child's session:
 * its final record when it wrote one; when the child still runs (its session is locked), the
 * record once it exits; otherwise a failure saying the child stopped without one.
 */
import { loadSession } from "../../session/load.ts";
import { findSession } from "../../session/paths.ts";
import type { Completion, SpawnRecord } from "./mailbox.ts";
import type { ChildFinal } from "./protocol.ts";

/** Reads the outcome of `spawn` from its child session. Never throws for a missing child. */
export async function recoverRun(
  spawn: SpawnRecord,
  where: { ternHome: string; workspace: string },
): Promise<Completion> {
  let path: string | undefined;
  // An id, never a path: a spawn record names its child by id.
  const id = spawn.childSessionId;
  try {
    path = /^[\w-]+$/.test(id) ? await findSession(where.ternHome, id, where.workspace) : undefined;
  } catch {
    path = undefined;
  }
  if (path !== undefined) {
    // The child holds its session's lock while it runs; the kernel drops it when it exits.
    const file = await Deno.open(path, { read: true });
    try {
      await file.lock(true);
    } finally {
      file.close();
    }
    const final = await finalOf(path);
    if (final !== undefined) return completionOf(spawn, final);
  }
  return {
    kind: "completion",
    taskName: spawn.taskName,
    agentId: spawn.agentId,
    childSessionId: spawn.childSessionId,
    runId: spawn.runId,
    status: "failed",
    content: "",
    finalEntryId: null,
    error: "The subagent stopped without a final record (its parent or it was killed)",
  };
}

/** The final record the child wrote into its own session, if it did. */
export async function finalOf(path: string): Promise<ChildFinal | undefined> {
  const session = await loadSession(path);
  for (const entry of session.entries.toReversed()) {
    if (entry.type !== "subagent") continue;
    const data = entry.data as { kind?: string; final?: ChildFinal };
    if (data.kind === "final" && data.final !== undefined) return data.final;
  }
  return undefined;
}

function completionOf(spawn: SpawnRecord, final: ChildFinal): Completion {
  return {
    kind: "completion",
    taskName: spawn.taskName,
    agentId: spawn.agentId,
    childSessionId: spawn.childSessionId,
    runId: spawn.runId,
    status: final.status,
    content: final.content,
    finalEntryId: final.finalEntryId,
    ...(final.error === undefined ? {} : { error: final.error }),
  };
}
