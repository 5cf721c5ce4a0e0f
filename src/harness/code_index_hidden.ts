/**
 * What the code index leaves out of a workspace: what the sandbox hides from the file tools (the
 * home folder's secret stores, tern's home) and what the person's deny rules hide. The agent's
 * index (code_index_live.ts) and `tern index` ask the same tests.
 */
import type { PermissionRule } from "../config/types.ts";
import { relative } from "../core/path.ts";
import type { PathTest } from "../sandbox/denied_paths.ts";
import type { WorkspaceHidden } from "./path_denials.ts";

/**
 * What the index leaves out of `workspace`, as a test of workspace-relative paths: what the
 * sandbox hides from the file tools (the home folder's secret stores, tern's home) and what the
 * person's deny rules hide. `tern index` walks with it as the agent's index does, so it neither
 * stores nor sends to an embedding endpoint what the agent's tools may not read.
 */
export async function indexHidden(settings: {
  /** Absolute real path of the workspace. */
  workspace: string;
  ternHome: string;
  home?: string;
  rules?: readonly PermissionRule[];
}): Promise<PathTest> {
  const { secretLocations } = await import("../sandbox/protected_paths.ts");
  const prefixes = hiddenPrefixes(
    settings.workspace,
    sandboxHidden(secretLocations, settings.ternHome, settings.home),
  );
  const denied = await deniedTest(settings.workspace, settings.rules);
  return (path) => underPrefixes(prefixes, path) || denied?.(path) === true;
}

/**
 * `hidden` (absolute paths) as workspace-relative prefixes: "" when the workspace lies in one
 * (all of it is hidden); one beside the workspace hides nothing there.
 */
export function hiddenPrefixes(workspace: string, hidden: readonly string[]): string[] {
  return hidden.flatMap((path) => {
    const rel = relative(workspace, path);
    if (rel === "" || rel === ".." || rel.startsWith("../")) {
      return relative(path, workspace).startsWith("..") ? [] : [""];
    }
    return [rel];
  });
}

/** True when the workspace-relative `path` is one of `prefixes` or inside one. */
export function underPrefixes(prefixes: readonly string[], path: string): boolean {
  return prefixes.some((prefix) =>
    prefix === "" || path === prefix || path.startsWith(`${prefix}/`)
  );
}

/** What the sandbox hides from the file tools, by the names given and the real ones. */
export function sandboxHidden(
  secretLocations: (home: string) => string[],
  ternHome: string,
  home: string | undefined,
): string[] {
  const hidden = [...(home === undefined ? [] : secretLocations(home)), ternHome];
  return [...new Set([...hidden, ...hidden.map(realOrSelf)])];
}

/**
 * What the person's deny rules hide in `workspace` now, as a test of workspace-relative paths;
 * undefined without a deny rule with a path (then nothing more loads).
 */
export async function deniedTest(
  workspace: string,
  rules: readonly PermissionRule[] | undefined,
  hidden?: () => Promise<WorkspaceHidden | undefined>,
): Promise<PathTest | undefined> {
  if (rules === undefined) return undefined;
  const { hiddenInWorkspace, hiddenPart, personDenials } = await import("./path_denials.ts");
  const denials = await personDenials(rules);
  if (denials === null) return undefined;
  const found = await (hidden?.() ?? hiddenInWorkspace(workspace, rules));
  // By the file and every folder above it (a rule on a folder hides all it holds), and where
  // a link the rules match leads (`secrets -> vault` hides `vault/`), as the sandbox's view.
  return (path) => hiddenPart(denials, path) !== undefined || found?.test(path) === true;
}

function realOrSelf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}
