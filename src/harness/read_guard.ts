/**
 * What tern may read in its own process to give to the model: the project's context files,
 * `MEMORY.md` and topic files, skills and the files they name, prompt templates. These reads do
 * not go through the tool worker, whose file system permissions and the gate's path rules keep
 * the model's own reads away from secrets, so the same lines are drawn here: a file is refused
 * when its real path (where a link leads) or the path as named lies in a home secret location
 * (`~/.ssh`, `~/.aws`, ...) or tern's home, or is a path the person's deny rules hide from the
 * reading tools: by its name, or as where a link they match leads (`secrets -> vault` hides
 * `vault/`, as the sandbox's view does). A repository (or a command the model ran) could
 * otherwise link `AGENTS.md` or a skill's file to `.env`, `vault/key.txt` or `~/.ssh/id_ed25519`
 * and have tern put it into the prompt.
 */
import type { PermissionRule } from "../config/schema.ts";
import type { ReadRefusal } from "../config/workspace_file.ts";
import { basename, relative, resolve, sep } from "../core/path.ts";
import { realPathOrNull } from "../core/verified_open.ts";
import { secretLocations } from "../sandbox/protected_paths.ts";
import type { PathTest } from "../sandbox/denied_paths.ts";
import {
  hiddenInWorkspace,
  hiddenPart,
  personDenials,
  type WorkspaceHidden,
} from "./path_denials.ts";

/** Where the guard draws its lines. */
export interface ReadGuardPlaces {
  /** The workspace (absolute). */
  workspace: string;
  /** tern's home: none of it is the project's. */
  ternHome: string;
  /** The person's home folder, whose secret locations stay closed; none when unknown. */
  home?: string;
  /** The person's rules (the config's): what their deny rules hide from reading is refused. */
  rules: readonly PermissionRule[];
}

/** Options of {@linkcode modelReadGuard}. */
export interface ReadGuardOptions {
  /**
   * What the person's deny rules hide in the workspace now (hiddenInWorkspace: where a link they
   * match leads as well), asked at each file: a conversation keeps one search for all its readers
   * and searches again after a command (WorkspaceHiddenSearch). An Error (the search failed)
   * refuses every file in the workspace. Default: searched once, here, when a deny rule names a
   * path.
   */
  hidden?: () => WorkspaceHidden | Error | undefined;
}

/**
 * The refusal for `places`: a reason for a file the model could not read with its own tools,
 * undefined for one it could. Loads the rule matcher, and searches the workspace for where the
 * links it matches lead, only when a deny rule names a path.
 */
export async function modelReadGuard(
  places: ReadGuardPlaces,
  options: ReadGuardOptions = {},
): Promise<ReadRefusal> {
  const named = [
    ...(places.home === undefined ? [] : secretLocations(places.home)),
    places.ternHome,
  ].map((path) => resolve(path));
  // By the names given and by where they lead (a home folder behind a link): resolved at the
  // first file asked about, not on the way to a first request that may read none.
  let resolved: string[] | undefined;
  const closedFolders = () =>
    resolved ??= [...new Set([...named, ...named.map((path) => realPathOrNull(path) ?? path)])];
  const denials = await personDenials(places.rules);
  const workspace = resolve(places.workspace);
  const hidden = options.hidden ??
    (denials === null ? () => undefined : await searchedOnce(workspace, places.rules));
  const realWorkspace = realPathOrNull(workspace) ?? workspace;
  return (real, asked) => {
    for (const path of [real, resolve(asked)]) {
      const secret = closedFolders().find((folder) =>
        path === folder || path.startsWith(folder + sep)
      );
      if (secret !== undefined) {
        return `it leads to "${path}" in "${secret}", which tools may not read`;
      }
    }
    if (denials === null) return undefined;
    const found = hidden();
    for (const [path, root] of [[real, realWorkspace], [resolve(asked), workspace]]) {
      // Inside the workspace a rule's pattern is matched as the read tool would match it;
      // above it (a repository root's file), by the file's name, as if it lay at the top.
      const rel = relative(root, path);
      const inside = !rel.startsWith("..") && !rel.startsWith(sep);
      const key = (inside ? rel : basename(path)).split(sep).join("/");
      const byName = hiddenPart(denials, key);
      if (byName !== undefined) return `your deny rules keep "${byName}" from tools`;
      if (!inside || found === undefined) continue;
      if (found instanceof Error) {
        return `tern cannot tell what your deny rules hide in the workspace: ${found.message}`;
      }
      // Where a link the rules match leads (`secrets -> vault` hides `vault`), as the view.
      const byLink = firstHidden(found.test, key);
      if (byLink !== undefined) {
        return `your deny rules keep "${byLink}" from tools (a link they match leads there)`;
      }
    }
    return undefined;
  };
}

/** What `rules` hide in `workspace` as found now, for a guard used at once; the error if none. */
async function searchedOnce(
  workspace: string,
  rules: readonly PermissionRule[],
): Promise<() => WorkspaceHidden | Error | undefined> {
  const found = await hiddenInWorkspace(workspace, rules).catch((error: unknown) =>
    error instanceof Error ? error : new Error(String(error))
  );
  return () => found;
}

/** The workspace-relative `path` or the first folder above it that `test` hides. */
function firstHidden(test: PathTest, path: string): string | undefined {
  for (let end = path.indexOf("/"); end !== -1; end = path.indexOf("/", end + 1)) {
    if (test(path.slice(0, end))) return path.slice(0, end);
  }
  return test(path) ? path : undefined;
}
