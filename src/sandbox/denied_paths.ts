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
import { SandboxViewError } from "./protected_paths.ts";
import { RULE_PATH_OPTIONS, rulePathGlobs, toolMatcher } from "./rule_match.ts";

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
  /**
   * Where matches can be: each rule's folder before its first glob (`secrets` for `secrets/**`,
   * the workspace for a pattern that starts with a glob), and how many levels below it a match
   * can lie (`Infinity` for a globstar or a brace), so the search lists only those folders.
   */
  reach: readonly Reach[];
}

/** Where a rule's matches can be: under `base` (workspace-relative), at most `depth` below. */
export interface Reach {
  base: string;
  depth: number;
}

/** The paths of a workspace {@linkcode PathDenials} take out of the view (real paths). */
export interface DeniedPaths {
  /**
   * Replaced by an empty read-only folder, or a file that cannot be opened: the matches, and
   * the folders the search could not list (unreadable, or past its budget).
   */
  hidden: string[];
  /** Bound read-only. */
  readOnly: string[];
  /** False when the search stopped at its budget (the folders it did not list are hidden). */
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
  const reach: Reach[] = [];
  for (const rule of chosen) {
    const covers = toolMatcher(rule.tool ?? "*");
    // As the policy reads it: a rule naming a folder (`secrets`, `secrets/`) is about all it holds.
    const test = picomatch(rulePathGlobs(rule.path!, true), RULE_PATH_OPTIONS);
    if (reading.some(covers)) hide.push(test);
    else if (writing.some(covers)) protect.push(test);
    else continue;
    // The view is searched inside the workspace only: a rule about a path outside it (`/etc/x`,
    // `../x`) is decided per call.
    const within = reachOf(rule.path!, picomatch.scan(rule.path!));
    if (!within.base.startsWith("/") && !within.base.split("/").includes("..")) reach.push(within);
  }
  if (hide.length === 0 && protect.length === 0) return null;
  const any = (tests: PathTest[]): PathTest => (path) => tests.some((test) => test(path));
  return { hide: any(hide), protect: any([...hide, ...protect]), reach };
}

/** Where the matches of `pattern` can be, from picomatch's scan of it. */
function reachOf(pattern: string, scan: { base: string; glob: string }): Reach {
  const base = scan.base.replace(/^\.\/+/, "").replace(/\/+$/, "");
  // A pattern picomatch does not split as expected is searched everywhere.
  if (base !== "" && !pattern.replace(/^\.\/+/, "").startsWith(base)) {
    return { base: "", depth: Infinity };
  }
  if (scan.glob === "") return { base, depth: 0 };
  const unbounded = /\*\*|[{}()\\]/.test(scan.glob);
  return { base, depth: unbounded ? Infinity : scan.glob.split("/").length };
}

/**
 * The longest path of a folder the search enters, in bytes: its entries (a name is at most 255
 * bytes) still fit in PATH_MAX (4096), so each can be named to realpath and bubblewrap.
 */
const DEEPEST_BYTES = 3800;

const encoder = new TextEncoder();

/** A child name no real entry has: a folder whose every path matches matches `<folder>/PROBE`. */
const PROBE = "\u0001";

/** Options for {@linkcode findDeniedPaths}. */
export interface FindDeniedOptions {
  /** Stop after listing this many entries (default 50,000, as the `.git` search). */
  maxEntries?: number;
}

/**
 * The real paths under `workspace` that `denials` take out of the view, by a breadth-first walk
 * of the folders their rules can reach, that follows no link and does not enter the workspace's
 * own `.git` (read-only, and no command can put anything in it). A matching link counts by where
 * it leads when that is inside the workspace; one leading out is left alone (outside the writable
 * roots everything is read-only or masked already, and binding its target would show it).
 *
 * It fails closed: a folder it cannot list (unreadable, a command's `chmod 000`) is hidden whole,
 * and so is each folder left when the budget is spent. Throws SandboxViewError when the
 * workspace itself cannot be listed, or holds a name Deno cannot give back (not UTF-8), since
 * neither can be hidden by path.
 */
export async function findDeniedPaths(
  workspace: string,
  denials: PathDenials,
  options: FindDeniedOptions = {},
): Promise<DeniedPaths> {
  const root = Deno.realPathSync(workspace);
  const found: DeniedPaths = { hidden: [], readOnly: [], complete: true };
  let budget = options.maxEntries ?? 50_000;
  /**
   * Decides the entry `relative` (`kind` as lstat sees it) and returns whether the search
   * should list it: a real folder that is not hidden whole.
   */
  const consider = (relative: string, kind: "link" | "dir" | "other"): boolean => {
    const path = join(root, relative);
    if (kind === "link") {
      const target = targetInside(path, root);
      if (target !== null && denials.hide(relative)) found.hidden.push(target);
      else if (target !== null && denials.protect(relative)) found.readOnly.push(target);
      return false;
    }
    const whole = (test: PathTest) => test(relative) && test(`${relative}/${PROBE}`);
    if (kind === "dir" && whole(denials.hide)) {
      found.hidden.push(path);
      return false;
    }
    if (kind !== "dir" && denials.hide(relative)) found.hidden.push(path);
    else if (kind === "dir" ? whole(denials.protect) : denials.protect(relative)) {
      found.readOnly.push(path);
    }
    // A folder this deep is hidden whole: what is inside has paths too long to name to the
    // kernel (PATH_MAX), so nothing in it could be hidden one by one.
    if (kind === "dir" && encoder.encode(path).length > DEEPEST_BYTES) {
      found.hidden.push(path);
      return false;
    }
    return kind === "dir";
  };
  // Each folder to list, with how many levels below it matches can still be.
  let level: [string, number][] = [];
  for (const [base, depth] of startingFolders(denials.reach)) {
    if (base === "") level.push(["", depth]);
    else {
      const kind = kindOf(join(root, base));
      if (kind !== "absent" && consider(base, kind) && depth >= 1) level.push([base, depth]);
    }
  }
  let listed = 0;
  while (level.length > 0) {
    const next: [string, number][] = [];
    for (const [index, [folder, depth]] of level.entries()) {
      if (budget <= 0) {
        // Fail closed: every folder not listed yet is hidden whole.
        found.complete = false;
        const unlisted = [...level.slice(index), ...next].map(([rest]) => join(root, rest));
        found.hidden.push(...unlisted);
        return unique(found);
      }
      if (++listed % 256 === 0) await new Promise((done) => setTimeout(done, 0));
      const entries = listDir(join(root, folder));
      if (entries === null) {
        if (folder === "") {
          throw new SandboxViewError(
            `Cannot hold your deny rules: tern cannot list the workspace ${root}. ` +
              `Make it readable (chmod u+rx "${root}"); commands wait until then`,
          );
        }
        found.hidden.push(join(root, folder));
        continue;
      }
      budget -= entries.length;
      for (const entry of entries) {
        if (folder === "" && entry.name === ".git") continue;
        const relative = folder === "" ? entry.name : `${folder}/${entry.name}`;
        if (entry.name.includes("\uFFFD") && kindOf(join(root, relative)) === "absent") {
          throw new SandboxViewError(
            `Cannot hold your deny rules: ${join(root, folder)} holds a name that is not UTF-8, ` +
              "which tern cannot hide by path. Rename it; commands wait until then",
          );
        }
        const kind = entry.isSymlink ? "link" : entry.isDirectory ? "dir" : "other";
        if (consider(relative, kind) && depth > 1) next.push([relative, depth - 1]);
      }
    }
    level = next;
  }
  return unique(found);
}

/** `found` without repeats (rules whose reaches overlap find a path twice). */
function unique(found: DeniedPaths): DeniedPaths {
  return { ...found, hidden: [...new Set(found.hidden)], readOnly: [...new Set(found.readOnly)] };
}

/**
 * Where the search starts: each rule's base with its depth (the base itself is decided first,
 * like any entry); a base inside another's reach is left to that one.
 */
function startingFolders(reach: readonly Reach[]): [string, number][] {
  const bases = new Map<string, number>();
  for (const { base, depth } of reach) bases.set(base, Math.max(bases.get(base) ?? 0, depth));
  const covered = (base: string) =>
    [...bases].some(([other, depth]) =>
      other !== base && depth === Infinity && (other === "" || base.startsWith(`${other}/`))
    );
  return [...bases].filter(([base]) => !covered(base))
    .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
}

/**
 * What is at `path` as lstat sees it; a base reached through a link on the way counts as a
 * link (the search never follows one).
 */
function kindOf(path: string): "link" | "dir" | "other" | "absent" {
  try {
    const info = Deno.lstatSync(path);
    if (info.isSymlink) return "link";
    if (Deno.realPathSync(path) !== path) return "link";
    return info.isDirectory ? "dir" : "other";
  } catch {
    return "absent";
  }
}

/** Where the link at `path` leads when that is an existing path inside `root`; else null. */
function targetInside(path: string, root: string): string | null {
  try {
    const target = Deno.realPathSync(path);
    return target.startsWith(`${root}/`) ? target : null;
  } catch {
    return null; // Dangling: nothing to hide.
  }
}

/** The entries of `dir`, sorted by name; null when it cannot be listed. */
function listDir(dir: string): Deno.DirEntry[] | null {
  try {
    return [...Deno.readDirSync(dir)].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    );
  } catch {
    return null;
  }
}
