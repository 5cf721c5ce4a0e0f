/** The words a deny rule refuses with (see `denialReason`). */
import type { CompiledRule } from "./rules.ts";

/**
 * What a deny rule tells the model and the person: the person's own rule's reason as they wrote
 * it; for a project's rule (`from`), tern's words naming its file, and the repository's reason
 * quoted apart on one line, cut short and marked unverified, never standing where tern's are.
 */
export function denialReason(rule: Pick<CompiledRule, "from" | "reason" | "label">): string {
  if (rule.from === undefined) return rule.reason ?? `A rule forbids this (${rule.label})`;
  const said = rule.reason?.trim() ?? "";
  const cut = said.length > 300 ? `${said.slice(0, 300)}…` : said;
  const quoted = cut === "" ? "" : `; it says (unverified): ${JSON.stringify(cut)}`;
  return `A rule in ${rule.from} forbids this (${rule.label})${quoted}`;
}
