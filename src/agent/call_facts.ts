/**
 * What the permission gate works out about one call before deciding: the facts the policy
 * needs, what a reviewer is shown, the file roots a tool may use, and masked observations.
 */
import { relative } from "../core/path.ts";
import type { Observation } from "../core/observation.ts";
import {
  approvalKey,
  type CallFacts,
  describeApprovalKey,
  type Verdict,
} from "../sandbox/policy.ts";
import type { ReviewRequest } from "../sandbox/review.ts";
import { coveringRuleCommands } from "../sandbox/rules.ts";
import type { SecretMasker } from "../sandbox/secrets.ts";
import { classifyShell } from "../sandbox/shell/classify.ts";
import type { Grants } from "../sandbox/types.ts";
import { realPathOf } from "../tools/paths.ts";
import type { Tool } from "../tools/define.ts";

/**
 * The facts the policy needs, from what the tool declares: the command's risk for a tool that
 * runs in the shell sandbox (its `command` argument), the paths a call names for the others.
 */
export async function analyseCall(
  tool: Pick<Tool, "name" | "readOnly" | "runsIn" | "paths" | "network">,
  args: unknown,
  workspace: string,
): Promise<CallFacts> {
  const facts: CallFacts = { tool: tool.name, readOnlyTool: tool.readOnly, runsIn: tool.runsIn };
  const fields = typeof args === "object" && args !== null ? args as Record<string, unknown> : {};
  if (tool.runsIn === "sandbox" && typeof fields.command === "string") {
    facts.shell = await classifyShell(fields.command);
  }
  const named = (await tool.paths(args)).map(({ path }) => resolveLoose(workspace, path));
  const inWorkspace = (path: string, root: string) => {
    const rel = relative(root, path);
    return rel === "" ? "." : rel;
  };
  // A path through a link is decided where it leads too (the strictest verdict wins): a rule
  // about `package.json` also holds for `docs/pj` linking to it, and one about `/srv/secrets`
  // for a repository's `docs` linking there (as `../../srv/secrets`, which the policy resolves).
  const realWorkspace = await realPathOf(workspace);
  const reached = (await Promise.all(named.map(realPathOf))).map((real) =>
    real === realWorkspace || real.startsWith(`${realWorkspace}/`)
      ? inWorkspace(real, realWorkspace)
      : relative(workspace, real)
  );
  const lexical = named.map((path) => inWorkspace(path, workspace));
  const paths = [...new Set([...lexical, ...reached])];
  const network = await tool.network?.(args);
  if (network !== undefined) facts.network = network;
  if (paths.length > 0) facts.path = paths[0];
  if (paths.length > 1) facts.morePaths = paths.slice(1);
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

/**
 * What a person or the AUTO reviewer is shown for a call the policy left at "ask". Every field
 * that can quote the model's words (the arguments, the command, a path in the policy's or a
 * hook's reason, the model's stated reason, the rules and scope offered) has known keys masked;
 * `tool` and `profile` are tern's and the person's own names.
 */
export function reviewRequestFor(
  tool: string,
  args: unknown,
  facts: CallFacts,
  verdict: Verdict,
  profile: string,
  masker: SecretMasker,
): ReviewRequest {
  const fields = typeof args === "object" && args !== null ? args as Record<string, unknown> : {};
  const summary = facts.network
    ? `${tool} ${facts.network.what}`
    : facts.shell && typeof fields.command === "string"
    ? fields.command
    : [tool, facts.path ?? "", ...facts.morePaths ?? []].join(" ").trim();
  const description = facts.shell && typeof fields.description === "string"
    ? fields.description.trim()
    : "";
  const rememberAs = rememberScope(facts, masker);
  const allowCommands = facts.shell ? coveringRuleCommands(facts.shell.analysis) : undefined;
  const shownArgs = masker.maskDeep(args);
  const shownSummary = masker.mask(summary);
  const hiddenKeys = shownSummary !== summary || JSON.stringify(shownArgs) !== JSON.stringify(args);
  return {
    tool,
    args: shownArgs,
    summary: shownSummary,
    ...(hiddenKeys ? { hiddenKeys: true as const } : {}),
    ...(facts.shell ? { command: true as const } : {}),
    ...(allowCommands === undefined
      ? {}
      : { allowCommands: allowCommands.map((command) => masker.mask(command)) }),
    ...(facts.network ? { network: true as const } : {}),
    // The policy's reason quotes the call (`redirection ">" writes "/tmp/<key>.txt"`), a
    // hook's quotes the hook's own output.
    reason: masker.mask(verdict.reason),
    ...(description === "" ? {} : { modelReason: masker.mask(description) }),
    ...(verdict.note === undefined
      ? {}
      : { note: { from: masker.mask(verdict.note.from), text: masker.mask(verdict.note.text) } }),
    profile,
    rememberable: rememberAs !== undefined,
    ...(rememberAs === undefined ? {} : { rememberAs }),
  };
}

/**
 * What "allow for this session" remembers after this call, in words, secrets masked
 * (`ReviewRequest.rememberAs`); undefined when nothing can be remembered safely.
 */
export function rememberScope(facts: CallFacts, masker: SecretMasker): string | undefined {
  const key = approvalKey(facts);
  return key === undefined ? undefined : masker.mask(describeApprovalKey(key));
}

export function maskObservation(observation: Observation, masker: SecretMasker): Observation {
  if (observation.status === "SUCCEEDED") {
    const { details } = observation;
    // A write's diff shows the lines around the change: a key the file held among them.
    return {
      ...observation,
      output: masker.mask(observation.output),
      ...(details?.kind === "diff"
        ? { details: { ...details, diff: masker.mask(details.diff) } }
        : {}),
    };
  }
  return { ...observation, message: masker.mask(observation.message) };
}
