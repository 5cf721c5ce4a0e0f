/**
 * What a child was given to act with (the parent's review mode, profile, who may widen its
 * sandbox, and the session's grants and approvals), and whether the session allows less now:
 * a child started under more than the session now allows is stopped (host.ts).
 */
import type { PermissionChange } from "../../session/types.ts";
import { allowsNoMore } from "../run_session.ts";
import type { ParentSettings } from "./parent_settings.ts";

/** The parent's permissions a child holds, as handed over in its request. */
export interface Allowance {
  mode: ParentSettings["mode"];
  profile: string;
  noSandbox: boolean;
  autoNetwork: ParentSettings["autoNetwork"];
  autoAskRules: ParentSettings["autoAskRules"];
  /** The session's permission entries (grants and approvals), each as JSON. */
  changes: readonly string[];
}

/** The allowance of `settings` with the session's permission entries `changes`. */
export function allowanceOf(
  settings: ParentSettings,
  changes: readonly PermissionChange[],
): Allowance {
  return {
    mode: settings.mode,
    profile: settings.profile,
    noSandbox: settings.noSandbox,
    autoNetwork: settings.autoNetwork,
    autoAskRules: settings.autoAskRules,
    changes: changes.map((change) => JSON.stringify(change)),
  };
}

/** Least to most permissive: who may widen a child's sandbox in AUTO. */
const AUTO_NETWORK: readonly string[] = ["never", "person", "reviewer"];
/** Least to most permissive: who answers the person's "ask" rules in AUTO. */
const AUTO_ASK_RULES: readonly string[] = ["person", "reviewer"];

/**
 * What `now` allows less of than `given`, in words (e.g. `profile ":read-only"`); undefined
 * when it allows no less. Two profiles that cannot be compared (custom ones) count as less, and
 * so does a grant or approval of `given` that `now` lacks (a rewind, `/tree`, another session).
 */
export function narrowing(given: Allowance, now: Allowance): string | undefined {
  if (!allowsNoMore("mode", given.mode, now.mode)) return `mode "${now.mode}"`;
  if (!allowsNoMore("profile", given.profile, now.profile)) return `profile "${now.profile}"`;
  if (given.noSandbox && !now.noSandbox) return "the sandbox";
  if (rank(AUTO_NETWORK, given.autoNetwork) > rank(AUTO_NETWORK, now.autoNetwork)) {
    return `autoNetwork "${now.autoNetwork}"`;
  }
  if (rank(AUTO_ASK_RULES, given.autoAskRules) > rank(AUTO_ASK_RULES, now.autoAskRules)) {
    return `autoAskRules "${now.autoAskRules}"`;
  }
  const held = new Set(now.changes);
  if (given.changes.some((change) => !held.has(change))) return "a session grant dropped";
  return undefined;
}

/** The place of `value` in `order`; an unknown value ranks highest (it is never less). */
function rank(order: readonly string[], value: string): number {
  const index = order.indexOf(value);
  return index === -1 ? order.length : index;
}
