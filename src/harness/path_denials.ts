/**
 * What the person's deny rules with a path keep from the tools, compiled against the built-in
 * tools' own descriptions (see sandbox/denied_paths.ts): for the sandbox's view, sandboxed MCP
 * servers, code search results and `@` mentions. Loads nothing without such a rule, so a run without one pays nothing.
 */
import type { PermissionRule } from "../config/schema.ts";
import type { PathDenials } from "../sandbox/denied_paths.ts";

/** The denials of `rules`; null without a deny rule that names a path. */
export async function personDenials(
  rules: readonly PermissionRule[],
): Promise<PathDenials | null> {
  if (!rules.some((rule) => rule.action === "deny" && rule.path !== undefined)) return null;
  const [{ pathDenials }, { BUILTIN_MANIFEST }] = await Promise.all([
    import("../sandbox/denied_paths.ts"),
    import("../tools/mod.ts"),
  ]);
  return await pathDenials(rules, BUILTIN_MANIFEST);
}
