/**
 * The policy: a pure function from one analysed tool call to allow, ask or deny, plus what
 * decided it. It never runs anything and never asks anyone; `review.ts` resolves "ask".
 *
 * Order: deny rules (and, when command deny rules exist, commands that hide what they run) →
 * the profile's hard limits → ask rules → read-only classification →
 * allow rules → approvals remembered for this session → ask.
 */
import { resolve } from "../core/path.ts";
import type { SandboxProfile } from "./profiles.ts";
import { denialReason } from "./denial_reason.ts";
import {
  allowRulesCover,
  type CompiledRule,
  plainCommand,
  ruleApplies,
  type RuleSubject,
  unseenByDenyRule,
} from "./rules.ts";
import type { ShellRisk } from "./shell/classify.ts";
import type { AskNote } from "./review.ts";

/** One call as the policy sees it. */
export interface CallFacts {
  tool: string;
  /** The tool never changes anything (read, list, glob, grep). */
  readOnlyTool: boolean;
  /** The workspace-relative path the call names, if any (the first, when it names several). */
  path?: string;
  /** The other paths the call names; each is decided like `path`, and the strictest wins. */
  morePaths?: readonly string[];
  /** The analysed command of a call that runs in the shell sandbox. */
  shell?: ShellRisk;
  /**
   * The network access a web tool's call makes (`host`, and `what` a person is shown). Only a
   * profile with the whole network allows it; hosts granted to shell commands do not.
   */
  network?: { host: string; what: string };
  /** Where the tool declares it runs; `host` (MCP tools) is outside every sandbox. */
  runsIn?: "worker" | "sandbox" | "host";
}

/** Who or what settled a call. */
export type DecidedBy = "rule" | "profile" | "classifier" | "session" | "default";

export interface Verdict {
  action: "allow" | "ask" | "deny";
  by: DecidedBy;
  /** The rule's label when a rule decided. */
  rule?: string;
  /** One sentence a person (or the model, on denial) can act on: tern's own words. */
  reason: string;
  /** An ask rule's own words, with where the rule is written (`ReviewRequest.note`). */
  note?: AskNote;
}

export interface PolicyContext {
  profile: SandboxProfile;
  rules: readonly CompiledRule[];
  /** Approval keys a person granted "for this session" (see `approvalKey`). */
  sessionApprovals: ReadonlySet<string>;
  /**
   * The workspace, so that a deny or ask rule written as an absolute path (`/etc/x`, a file of a
   * granted folder) is matched against the call's absolute path; without it such a rule matches
   * nothing (calls name workspace-relative paths: `../../etc/x`).
   */
  workspace?: string;
}

/**
 * Decides one call. Pure: the same facts and context give the same verdict. A call naming
 * several paths gets the strictest verdict of its paths (deny, then ask, then allow).
 */
export function evaluate(facts: CallFacts, context: PolicyContext): Verdict {
  const { morePaths = [], ...first } = facts;
  const verdicts = [first, ...morePaths.map((path) => ({ ...first, path }))]
    .map((one) => evaluatePath(one, context));
  return verdicts.find((v) => v.action === "deny") ?? verdicts.find((v) => v.action === "ask") ??
    verdicts[0];
}

function evaluatePath(facts: CallFacts, context: PolicyContext): Verdict {
  const subject: RuleSubject = { tool: facts.tool, path: facts.path };
  if (facts.path !== undefined && context.workspace !== undefined) {
    subject.absolute = resolve(context.workspace, facts.path);
  }
  if (facts.shell) subject.shell = facts.shell.analysis;
  const { rules, profile } = context;

  const deny = rules.find((rule) => rule.action === "deny" && ruleApplies(rule, subject));
  if (deny) {
    return {
      action: "deny",
      by: "rule",
      rule: deny.label,
      reason: denialReason(deny),
    };
  }

  // Deny rules cannot see into a command that does not parse, yet bash may still run part of it
  // (`git push` on the line before a syntax error): deny rather than let review settle it.
  const analysis = facts.shell?.analysis;
  if (analysis && !analysis.ok && rules.some((rule) => deniesCommands(rule, facts.tool))) {
    return {
      action: "deny",
      by: "rule",
      rule: "deny rules",
      reason: `Deny rules cannot be checked: ${analysis.error}`,
    };
  }
  // Nor into one that hides what it runs (`$cmd`, `find -exec`'s `$x`, `git -c alias.…`).
  for (const rule of analysis?.ok ? rules : []) {
    const unseen = deniesCommands(rule, facts.tool) && unseenByDenyRule(rule, analysis!);
    if (!unseen) continue;
    return {
      action: "deny",
      by: "rule",
      rule: rule.label,
      reason: `Tern cannot tell what this command would run, so it cannot check the rule ` +
        `(${rule.label}): ${unseen}`,
    };
  }

  if (facts.network) return networkVerdict(facts, context);

  const readOnly = facts.shell ? facts.shell.readOnly : facts.readOnlyTool;
  if (profile.readOnly && !readOnly) {
    const what = facts.shell
      ? `the command is not read-only (${facts.shell.reasons.join("; ") || facts.shell.label})`
      : toolRisk(facts);
    return {
      action: "deny",
      by: "profile",
      reason: `The sandbox profile "${profile.name}" allows no changes: ${what}`,
    };
  }

  const ask = rules.find((rule) => rule.action === "ask" && ruleApplies(rule, subject));
  if (ask) return askedByRule(ask, readOnly && !facts.shell ? "read-only" : describeRisk(facts));

  if (readOnly) {
    return {
      action: "allow",
      by: "classifier",
      reason: facts.shell ? "The command only reads" : `"${facts.tool}" only reads`,
    };
  }

  if (facts.shell) {
    if (allowRulesCover(rules, facts.shell.analysis)) {
      return { action: "allow", by: "rule", rule: "allow rules", reason: "Allow rules cover it" };
    }
  } else {
    const allow = rules.find((rule) => rule.action === "allow" && ruleApplies(rule, subject));
    if (allow) return { action: "allow", by: "rule", rule: allow.label, reason: allow.label };
  }

  const key = approvalKey(facts);
  if (key !== undefined && context.sessionApprovals.has(key)) {
    return { action: "allow", by: "session", reason: `Approved for this session (${key})` };
  }
  return { action: "ask", by: "default", reason: describeRisk(facts) };
}

/**
 * A web tool's call: ask rules first; then allowed under a profile with the whole network
 * (`:external`, `net: ["*"]`); else by a host approved for this session
 * (`web:<host>`, which shell commands never see); else review decides. Hosts granted to shell
 * commands (a profile's `net` list, request_permissions) do not count: those go through the
 * commands' proxy, and the reverse holds too.
 */
function networkVerdict(facts: CallFacts, context: PolicyContext): Verdict {
  const subject: RuleSubject = { tool: facts.tool };
  const ask = context.rules.find((rule) => rule.action === "ask" && ruleApplies(rule, subject));
  if (ask) {
    return askedByRule(ask, `"${facts.tool}" reaches the network (${facts.network!.host})`);
  }
  const { profile } = context;
  if (profile.grants.net === "all") {
    return {
      action: "allow",
      by: "profile",
      reason: `The sandbox profile "${profile.name}" has the network`,
    };
  }
  const key = approvalKey(facts);
  if (key !== undefined && context.sessionApprovals.has(key)) {
    return { action: "allow", by: "session", reason: `Approved for this session (${key})` };
  }
  return {
    action: "ask",
    by: "default",
    reason: `"${facts.tool}" reaches the network (${facts.network!.host}), which the sandbox ` +
      `profile "${profile.name}" does not give`,
  };
}

/**
 * What "allow for this session" remembers: the tool for file tools; for bash, the command's
 * prefix (first word, plus the second when it is a subcommand) when the command is a single
 * simple command that parsed and hides nothing. Undefined when nothing safe can be remembered.
 */
export function approvalKey(facts: CallFacts): string | undefined {
  if (facts.network) return `web:${facts.network.host}`;
  if (!facts.shell) return `tool:${facts.tool}`;
  const analysis = facts.shell.analysis;
  if (!analysis.ok || analysis.opaque.length > 0 || analysis.commands.length !== 1) {
    return undefined;
  }
  if (!plainCommand(analysis.commands[0])) return undefined;
  const [name, second] = analysis.commands[0].argv;
  if (name === undefined) return undefined;
  const prefix = second !== undefined && /^[a-z][\w-]*$/.test(second) ? `${name} ${second}` : name;
  return `bash:${prefix}`;
}

/** What an {@linkcode approvalKey} allows, in words for the person who would remember it. */
export function describeApprovalKey(key: string): string {
  const colon = key.indexOf(":");
  const [kind, rest] = [key.slice(0, colon), key.slice(colon + 1)];
  if (kind === "bash") return `any "${rest} …" command`;
  if (kind === "web") return `any request to ${rest}`;
  return `any ${rest} call`;
}

function deniesCommands(rule: CompiledRule, tool: string): boolean {
  return rule.action === "deny" && rule.words !== undefined && rule.matchesTool(tool);
}

/**
 * An ask rule's verdict: tern's own account of the call (`risk`) as the reason, the rule's words
 * apart as a note that names the rule and its file. A repository's config writes those words,
 * so they never stand where tern's do.
 */
function askedByRule(rule: CompiledRule, risk: string): Verdict {
  const where = rule.from === undefined ? "your config" : rule.from;
  return {
    action: "ask",
    by: "rule",
    rule: rule.label,
    reason: risk,
    note: { from: `the ask rule ${rule.label} in ${where}`, text: rule.reason ?? "" },
  };
}

function describeRisk(facts: CallFacts): string {
  if (!facts.shell) return toolRisk(facts);
  const { label, reasons } = facts.shell;
  return reasons.length > 0 ? `${label}: ${reasons.join("; ")}` : label;
}

/** Why a tool that is not read-only needs approval. */
function toolRisk(facts: CallFacts): string {
  return facts.runsIn === "host"
    ? `"${facts.tool}" runs outside the sandbox and is not marked read-only ` +
      "(an MCP tool its server does not mark read-only: readOnlyHint)"
    : `"${facts.tool}" changes files`;
}
