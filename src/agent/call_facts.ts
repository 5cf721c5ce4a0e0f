/**
 * What the permission gate works out about one call before deciding: the facts the policy
 * needs, what a reviewer is shown, the file roots a tool may use, and masked observations.
 */
import { relative } from "node:path";
import type { Observation } from "../core/observation.ts";
import { approvalKey, type CallFacts, type Verdict } from "../sandbox/policy.ts";
import type { ReviewRequest } from "../sandbox/review.ts";
import type { SecretMasker } from "../sandbox/secrets.ts";
import { classifyShell } from "../sandbox/shell/classify.ts";
import type { Grants } from "../sandbox/types.ts";
import type { Tool } from "../tools/define.ts";

/** The facts the policy needs: the command's risk for bash, the path for file tools. */
export async function analyseCall(
  tool: Pick<Tool, "name" | "readOnly">,
  args: unknown,
  workspace: string,
): Promise<CallFacts> {
  const facts: CallFacts = { tool: tool.name, readOnlyTool: tool.readOnly };
  const fields = typeof args === "object" && args !== null ? args as Record<string, unknown> : {};
  if (tool.name === "bash" && typeof fields.command === "string") {
    facts.shell = await classifyShell(fields.command);
  } else if (typeof fields.path === "string") {
    const rel = relative(workspace, resolveLoose(workspace, fields.path));
    facts.path = rel === "" ? "." : rel;
  }
  return facts;
}

/** The granted read and write paths as the file tools' extra roots ("all" is `/`). */
export function fileRoots(grants: Grants): { read: readonly string[]; write: readonly string[] } {
  const paths = (granted: readonly string[] | "all") => granted === "all" ? ["/"] : granted;
  return { read: paths(grants.read), write: paths(grants.write) };
}

function resolveLoose(workspace: string, path: string): string {
  return path.startsWith("/") ? path : `${workspace}/${path}`;
}

export function reviewRequestFor(
  tool: string,
  args: unknown,
  facts: CallFacts,
  verdict: Verdict,
  profile: string,
  masker: SecretMasker,
): ReviewRequest {
  const fields = typeof args === "object" && args !== null ? args as Record<string, unknown> : {};
  const summary = tool === "bash" && typeof fields.command === "string"
    ? fields.command
    : `${tool} ${facts.path ?? ""}`.trim();
  const description = tool === "bash" && typeof fields.description === "string"
    ? fields.description.trim()
    : "";
  return {
    tool,
    args: masker.maskDeep(args),
    summary: masker.mask(summary),
    reason: verdict.reason,
    ...(description === "" ? {} : { modelReason: masker.mask(description) }),
    profile,
    rememberable: approvalKey(facts) !== undefined,
  };
}

export function maskObservation(observation: Observation, masker: SecretMasker): Observation {
  if (observation.status === "SUCCEEDED") {
    return { ...observation, output: masker.mask(observation.output) };
  }
  return { ...observation, message: masker.mask(observation.message) };
}
