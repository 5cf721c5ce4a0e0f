/**
 * What the person's deny rules with a path keep from the tools, compiled against the built-in
 * tools' own descriptions (see sandbox/denied_paths.ts): for the sandbox's view, sandboxed MCP
 * servers, code search results and `@` mentions. Loads nothing without such a rule, so a run without one pays nothing.
 */
import type { PermissionRule } from "../config/schema.ts";
import type { PathDenials } from "../sandbox/denied_paths.ts";

/**
 * The part of `relative` (a workspace-relative path with `/`) that `denials` hide: the path or
 * the first folder above it a rule matches (the sandbox's view hides such a folder whole, with
 * everything in it); undefined when none does.
 */
export function hiddenPart(denials: PathDenials, relative: string): string | undefined {
  const parts = relative.split("/").filter((part) => part !== "" && part !== ".");
  for (let end = 1; end <= parts.length; end++) {
    const key = parts.slice(0, end).join("/");
    if (denials.hide(key)) return key;
  }
  return undefined;
}

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
