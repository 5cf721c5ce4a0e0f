/**
 * The person's deny rules with a path, held for commands and the tool worker's folder-wide tools
 * too. The policy decides a call by the paths it names, which a shell command does not declare
 * (`cat secrets/key`, `grep -r . .`), and grep or list over a parent folder name only the parent.
 * So the paths such a rule matches are also taken out of the sandbox's view: a rule that keeps
 * the reading tools from a path hides it (an empty read-only folder, or a file that cannot be
 * opened), one that keeps only the writing tools from it makes it read-only.
 *
 * The rule's `path` is matched exactly as the policy matches it (rule_match.ts), against each
 * path the workspace holds when the plan is made: a folder whose every path matches is hidden
 * whole, otherwise each matching entry is. The plan is made again after each command that may
 * have changed the tree, so a matching file a command creates is hidden from the next one.
 */
import type { PermissionRule } from "../config/schema.ts";
import { join } from "../core/path.ts";
import { RULE_PATH_OPTIONS, toolMatcher } from "./rule_match.ts";

/** What a tool says of itself that decides how a rule about it is held (its manifest entry). */
export interface RuleTool {
  name: string;
  readOnly: boolean;
  /** Where it runs: "sandbox" for the shell tool, whose calls name no path a rule decides. */
  runsIn: string;
}

/** A test of a workspace-relative path (`secrets/key.txt`, `.` for the workspace). */
export type PathTest = (relative: string) => boolean;

/** What the person's deny rules keep from every tool, by workspace-relative path. */
export interface PathDenials {
  /** True for a path no tool may read (nor write). */
  hide: PathTest;
  /** True for a path no tool may write. */
  protect: PathTest;
}

/** The paths of a workspace {@linkcode PathDenials} take out of the sandbox's view. */
export interface DeniedPaths {
  /** Replaced by an empty read-only folder, or a file that cannot be opened. */
  hidden: string[];
  /** Bound read-only. */
  readOnly: string[];
  /** False when the search stopped at its budget: paths past it are decided per call only. */
  complete: boolean;
}

/**
 * What `rules` deny by path, given the `tools` there are: a deny rule with a `path` and no
 * `command` whose tool covers a read-only tool (no `tool`, `*`, `read`, `grep`, ...) hides what it
 * matches; one whose tool covers only tools that write what they name (`write`, `edit`, ...; not
 * the shell tool) protects it. Null when no rule does either (the common case: nothing is
 * searched).
 */
export async function pathDenials(
  rules: readonly PermissionRule[],
  tools: readonly RuleTool[],
): Promise<PathDenials | null> {
  const reading = tools.filter((tool) => tool.readOnly).map((tool) => tool.name);
  const writing = tools.filter((tool) => !tool.readOnly && tool.runsIn !== "sandbox")
    .map((tool) => tool.name);
  const chosen = rules.filter((rule) =>
    rule.action === "deny" && rule.path !== undefined && rule.command === undefined
  );
  if (chosen.length === 0) return null;
  const picomatch = (await import("picomatch")).default;
  const hide: PathTest[] = [];
  const protect: PathTest[] = [];
  for (const rule of chosen) {
    const covers = toolMatcher(rule.tool ?? "*");
    const test = picomatch(rule.path!, RULE_PATH_OPTIONS);
    if (reading.some(covers)) hide.push(test);
    else if (writing.some(covers)) protect.push(test);
  }
  if (hide.length === 0 && protect.length === 0) return null;
  const any = (tests: PathTest[]): PathTest => (path) => tests.some((test) => test(path));
  return { hide: any(hide), protect: any([...hide, ...protect]) };
}

/** A child name no real entry has: a folder whose every path matches matches `<folder>/PROBE`. */
const PROBE = "\u0001";

/** Options for {@linkcode findDeniedPaths}. */
export interface FindDeniedOptions {
  /** Stop after listing this many entries (default 50,000, as the `.git` search). */
  maxEntries?: number;
}

/**
 * The paths under `workspace` that `denials` take out of the view, by a breadth-first walk that
 * does not follow links and does not enter `.git`. A link that matches is given by its own path
 * (bubblewrap hides or protects its target) when its target is inside the workspace; one leading
 * out of it is left alone: what it leads to is outside the writable roots anyway, and binding it
 * read-only would show a file the view masks (a repository's `package.json` linked to a file of
 * the home folder). Never throws; unreadable folders are skipped.
 */
export async function findDeniedPaths(
  workspace: string,
  denials: PathDenials,
  options: FindDeniedOptions = {},
): Promise<DeniedPaths> {
  const found: DeniedPaths = { hidden: [], readOnly: [], complete: true };
  let budget = options.maxEntries ?? 50_000;
  let level: string[] = [""];
  let listed = 0;
  while (level.length > 0) {
    const next: string[] = [];
    for (const folder of level) {
      if (++listed % 256 === 0) await new Promise((done) => setTimeout(done, 0));
      const entries = listDir(join(workspace, folder));
      budget -= entries.length;
      for (const entry of entries) {
        if (entry.name === ".git") continue;
        const relative = folder === "" ? entry.name : `${folder}/${entry.name}`;
        const path = join(workspace, relative);
        if (entry.isSymlink) {
          if (!leadsInside(path, workspace)) continue;
          if (denials.hide(relative)) found.hidden.push(path);
          else if (denials.protect(relative)) found.readOnly.push(path);
          continue;
        }
        const whole = (test: PathTest) => test(relative) && test(`${relative}/${PROBE}`);
        if (entry.isDirectory && whole(denials.hide)) found.hidden.push(path);
        else if (!entry.isDirectory && denials.hide(relative)) found.hidden.push(path);
        else {
          const protectedHere = entry.isDirectory
            ? whole(denials.protect)
            : denials.protect(relative);
          if (protectedHere) found.readOnly.push(path);
          if (entry.isDirectory) next.push(relative);
        }
      }
      if (budget <= 0) {
        found.complete = false;
        return found;
      }
    }
    level = next;
  }
  return found;
}

/** True when the link at `path` leads to an existing path inside `workspace`, not to it. */
function leadsInside(path: string, workspace: string): boolean {
  try {
    const target = Deno.realPathSync(path);
    return target.startsWith(workspace.endsWith("/") ? workspace : `${workspace}/`);
  } catch {
    return false; // Dangling: nothing to hide.
  }
}

function listDir(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    );
  } catch {
    return [];
  }
}
