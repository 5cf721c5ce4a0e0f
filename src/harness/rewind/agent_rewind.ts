/**
 * Rewind for a front end holding an open agent session (the RPC and ACP servers): the same plan
 * and apply as `/rewind` and `tern sessions rewind`, after the last turn's checkpoint is written.
 * An RPC `rewind` command is two calls: `previewRewind` (the diff and conflicts go to the
 * client, which asks its person), then `confirmRewind` with their choice.
 */
import type { AgentSession } from "../agent_session.ts";
import { keyMasker } from "../../sandbox/secrets.ts";
import {
  applyRewind,
  planRewind,
  type RewindPlan,
  type RewindResult,
  type RewindScope,
} from "./rewind.ts";

/** What to rewind: a user entry id (or `"undo"`) and what to restore. */
export interface AgentRewindRequest {
  target: string;
  scope: RewindScope;
}

/**
 * The plan of a rewind of `agent`'s session (nothing changes yet). Must not run during a turn.
 * Its patch (the files' content, which may hold a key) has the keys tern holds masked, as
 * `/rewind` and `tern sessions rewind` show it.
 * @throws {TernError} for a target that is not a user message, or nothing to undo.
 */
export async function previewRewind(
  agent: AgentSession,
  request: AgentRewindRequest,
): Promise<RewindPlan> {
  if (agent.connected) await agent.conversation.checkpointsIdle();
  const plan = await planRewind(agent.session, request.target, {
    workspace: agent.workspace,
    scope: request.scope,
    maxFileBytes: agent.config.rewindMaxFileBytes || undefined,
    maxFiles: agent.config.rewindMaxFiles,
    rules: agent.config.rules,
  });
  const mask = agent.connected
    ? (text: string) => agent.conversation.maskKnownKeys(text)
    : (text: string) => keyMasker(agent.config).mask(text);
  // The patch is only shown: applying the plan reads its changes, never its patch.
  return { ...plan, patch: mask(plan.patch) };
}

/**
 * Applies `plan` (from {@linkcode previewRewind}); conflicting files are kept unless
 * `overwrite`. The next turn continues from the moved leaf, with only the grants and approvals
 * on its path.
 */
export async function confirmRewind(
  agent: AgentSession,
  plan: RewindPlan,
  options: { overwrite: boolean },
): Promise<RewindResult> {
  const result = await applyRewind(agent.session, plan, {
    workspace: agent.workspace,
    scope: plan.scope,
    maxFileBytes: agent.config.rewindMaxFileBytes || undefined,
    maxFiles: agent.config.rewindMaxFiles,
    rules: agent.config.rules,
    overwrite: options.overwrite,
  });
  // The leaf moved: grants and approvals left behind on the old path end now.
  if (result.leaf !== undefined) await agent.switchSession(agent.session);
  return result;
}
