/**
 * What the person's deny rules with a path keep from the tools, compiled against the built-in
 * tools' own descriptions (see sandbox/denied_paths.ts): for the sandbox's view, sandboxed MCP
 * servers, code search, checkpoints and what tern reads for the model (read_guard.ts: context
 * files, `@` mentions, the permission dialog's diff). Those outside the sandbox ask
 * {@linkcode hiddenInWorkspace} too, the view's own search, so where a matching link leads is
 * hidden from them as from commands. Loads nothing without such a rule, so a run without one
 * pays nothing.
 */
import type { PermissionRule } from "../config/schema.ts";
import type { PathDenials, PathTest } from "../sandbox/denied_paths.ts";

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

/** What {@linkcode hiddenInWorkspace} finds: the test, and a key that changes when it does. */
export interface WorkspaceHidden {
  test: PathTest;
  /** The same for two searches that found the same paths (a test may then be kept). */
  key: string;
}

/**
 * What `rules` hide from every tool in `workspace`, as checkpoints and rewinds must leave it
 * out: the paths a rule matches, where a matching link inside the workspace leads (the
 * sandbox's view hides that too: `.env -> config/prod.env` hides `config/prod.env`), and the
 * folders the search could not list (closed, as the view). A path is hidden with any folder
 * above it. Undefined without a deny rule with a path. @throws SandboxViewError when the
 * workspace cannot be listed.
 */
export async function hiddenInWorkspace(
  workspace: string,
  rules: readonly PermissionRule[],
): Promise<WorkspaceHidden | undefined> {
  const denials = await personDenials(rules);
  if (denials === null) return undefined;
  const { findDeniedPaths } = await import("../sandbox/denied_paths.ts");
  const root = Deno.realPathSync(workspace);
  const found = new Set<string>();
  for (const path of (await findDeniedPaths(root, denials)).hidden) {
    if (path === root) found.add(".");
    else if (path.startsWith(`${root}/`)) found.add(path.slice(root.length + 1));
  }
  const key = [...found].sort().join("\0");
  if (found.has(".")) return { test: () => true, key };
  return {
    test: (relative) => denials.hide(relative) || pathOrFolderIn(relative, found),
    key,
  };
}

/** Whether `relative` or a folder above it is in `paths`. */
function pathOrFolderIn(relative: string, paths: ReadonlySet<string>): boolean {
  if (paths.size === 0) return false;
  for (let end = relative.indexOf("/"); end !== -1; end = relative.indexOf("/", end + 1)) {
    if (paths.has(relative.slice(0, end))) return true;
  }
  return paths.has(relative);
}

/**
 * {@linkcode hiddenInWorkspace} of one workspace, kept for its readers (the read guard, code
 * search) until the workspace may have changed: after `changed()` (a command may have made a
 * link; a new turn: the person's editor may have) or for other rules, the next call searches
 * again. Without a deny rule with a path nothing is searched.
 */
export class WorkspaceHiddenSearch {
  readonly #workspace: string;
  #last:
    | { rules: readonly PermissionRule[]; found: Promise<WorkspaceHidden | undefined> }
    | undefined;

  constructor(workspace: string) {
    this.#workspace = workspace;
  }

  /** The workspace may have changed: the next `current()` searches again. */
  changed(): void {
    this.#last = undefined;
  }

  /**
   * What `rules` hide in the workspace now. @throws SandboxViewError when the workspace cannot
   * be listed (the next call searches again).
   */
  current(rules: readonly PermissionRule[]): Promise<WorkspaceHidden | undefined> {
    if (this.#last?.rules === rules) return this.#last.found;
    const last = { rules, found: hiddenInWorkspace(this.#workspace, rules) };
    this.#last = last;
    last.found.catch(() => {
      if (this.#last === last) this.#last = undefined;
    });
    return last.found;
  }
}
