/**
 * Who decides a request_permissions request, in order: tern's own folder is never granted; a
 * deny rule refuses; an allow rule of the person's own config that lists everything asked
 * grants it without review; otherwise BYPASS grants nothing, AUTO lets the reviewer grant only
 * narrow requests (`reviewerLimits`; the rest goes to a person, or is denied without one), and
 * ASK asks the person (denied without one). Every denial says how a person can grant it.
 *
 * Allow rules come only from the person's own config: `loadConfig` refuses allow rules in a
 * project's files.
 */
import type { ReviewMode } from "../config/schema.ts";
import {
  type AskPerson,
  review,
  type Reviewer,
  type ReviewOutcome,
  type ReviewRequest,
} from "../sandbox/review.ts";
import type { CompiledRule } from "../sandbox/rules.ts";
import { denialReason } from "../sandbox/denial_reason.ts";
import {
  allowRulePath,
  canonicalHost,
  expandRulePath,
  type GrantLists,
  type GrantPlaces,
  type GrantRequest,
  grantRuleCovers,
  grantRuleTouches,
  reviewerLimits,
  ruleFor,
  ternHomeReach,
  unpassableEnv,
} from "./request_permissions_policy.ts";

/** A rule about request_permissions, its paths expanded. */
export interface GrantRule {
  rule: CompiledRule;
  lists: GrantLists;
  /** For a deny rule with an absolute path: the requested paths it refuses (`CompiledRule.reaches`). */
  reaches?: (path: string) => boolean;
}

/** Who may decide, and where. */
export interface JudgeContext {
  mode: ReviewMode;
  person?: AskPerson;
  reviewer?: Reviewer;
  reviewTimeoutMs: number;
  signal: AbortSignal;
  rules: readonly GrantRule[];
  places: GrantPlaces;
  /**
   * A PreToolUse hook asked for a person's decision, in these words: past tern's own limits and
   * the deny rules, only a person grants it (no allow rule, no reviewer); denied without one.
   */
  hookAsks?: string;
}

/**
 * The rules of `rules` that decide request_permissions: allow rules naming the tool exactly
 * with lists, deny rules whose tool matches it and that name no command or path, and deny rules
 * with an absolute path and no command (refusing what they reach: `CompiledRule.reaches`). Paths are
 * expanded against `places` (a `~` path without a known home names nothing, nor does an allow
 * rule's workspace path that a link leads out of the workspace: `allowRulePath`).
 */
export function grantRules(rules: readonly CompiledRule[], places: GrantPlaces): GrantRule[] {
  const expand = (list: readonly string[] | undefined, allow: boolean) =>
    list?.flatMap((entry) => {
      try {
        const path = allow ? allowRulePath(entry, places) : expandRulePath(entry, places);
        return path === undefined ? [] : [path];
      } catch {
        return [];
      }
    });
  return rules.flatMap((rule): GrantRule[] => {
    // A deny rule about an absolute path (`/srv/app/secrets`) refuses a grant of what it
    // matches or of a folder that may hold it: a granted folder is open to commands and
    // folder-wide searches, which name no path the rule could decide.
    if (rule.action === "deny" && rule.reaches !== undefined && rule.words === undefined) {
      return [{ rule, lists: {}, reaches: rule.reaches }];
    }
    const applies = rule.action === "deny"
      ? rule.matchesTool("request_permissions") && rule.words === undefined &&
        rule.path === undefined
      : rule.action === "allow" && rule.tool === "request_permissions" &&
        rule.grants !== undefined;
    if (!applies) return [];
    const grants = rule.grants ?? {};
    const allow = rule.action === "allow";
    const lists: GrantLists = {
      read: expand(grants.read, allow),
      write: expand(grants.write, allow),
      hosts: grants.hosts?.map((host) => canonicalHost(host) ?? host),
      env: grants.env,
      commands: grants.commands,
    };
    return [{ rule, lists }];
  });
}

/**
 * Decides `request` (shown to a person or the reviewer as `shown`); `rule` is the label of the
 * rule that decided, if one did. Never throws.
 */
export async function judgeGrant(
  request: GrantRequest,
  shown: ReviewRequest,
  context: JudgeContext,
): Promise<{ outcome: ReviewOutcome; rule?: string; byHook?: true }> {
  const { mode, person, reviewer, reviewTimeoutMs, signal, places } = context;
  const deny = (reason: string, rule?: string) => ({
    outcome: { allow: false, by: "policy" as const, reason, remember: false },
    ...(rule !== undefined ? { rule } : {}),
  });
  const reach = ternHomeReach(request, places);
  if (reach !== undefined) return deny(`Denied: ${reach}`);
  const unpassable = unpassableEnv(request, places);
  if (unpassable !== undefined) return deny(`Denied: ${unpassable}`);
  const refusing = context.rules.find((r) =>
    r.rule.action === "deny" &&
    (r.reaches === undefined
      ? grantRuleTouches(r.lists, request)
      : [...request.read, ...request.write].some(r.reaches))
  );
  if (refusing !== undefined) {
    const { rule } = refusing;
    return deny(denialReason(rule), rule.label);
  }
  if (context.hookAsks !== undefined) {
    const why = "A PreToolUse hook asked for a person's decision";
    if (mode === "bypass" || person === undefined) {
      return { ...deny(`Not approved: ${why}, and no person is there to ask`), byHook: true };
    }
    const asked = { ...shown, note: { from: "a PreToolUse hook", text: context.hookAsks } };
    return {
      outcome: await review(asked, { mode: "ask", person, reviewTimeoutMs, signal }),
      byHook: true,
    };
  }
  const allowing = context.rules.find((r) =>
    r.rule.action === "allow" && grantRuleCovers(r.lists, request)
  );
  if (allowing !== undefined) {
    const { label } = allowing.rule;
    const reason = `Your rule allows it (${label})`;
    return { outcome: { allow: true, by: "policy", reason, remember: false }, rule: label };
  }
  const config = `${places.ternHome}/config.jsonc`;
  const howElse = request.withoutSandbox
    ? "(running without the sandbox always needs a person)"
    : `or add the rule ${ruleFor(request)} to "rules" in your own config (${config})`;
  if (mode === "bypass") {
    return deny(
      "--mode bypass grants nothing beyond the sandbox profile: a person can grant it with " +
        `--mode ask, ${howElse}`,
    );
  }
  const options = { person, reviewer, reviewTimeoutMs, signal };
  if (mode === "auto") {
    const limits = reviewerLimits(request, places);
    if (limits.length === 0) return { outcome: await review(shown, { mode: "auto", ...options }) };
    const why = `the reviewer may not grant ${limits.join("; ")}`;
    if (person !== undefined) {
      const asked = { ...shown, reason: `${shown.reason} (asking you: ${why})` };
      return { outcome: await review(asked, { mode: "ask", ...options }) };
    }
    return deny(
      `Not approved: ${why}, and no person is there to ask: run with --mode ask in a ` +
        `terminal, ${howElse}`,
    );
  }
  if (person === undefined) {
    return deny(
      'Not approved: this run is not interactive and review mode is "ask": run it in a ' +
        `terminal, ${howElse}`,
    );
  }
  return { outcome: await review(shown, { mode: "ask", ...options }) };
}
