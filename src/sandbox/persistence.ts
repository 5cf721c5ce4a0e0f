/**
 * Files in the workspace that run code on the host later, outside any sandbox: when a person
 * enters the folder (direnv), opens it in an editor (tasks, settings), runs git (hooks, config),
 * installs or builds (package scripts, Makefiles, build hooks) or starts tern again (`.tern`,
 * `.mcp.json`, context files). A command may change them for a good reason, so they are not
 * blocked; each change is told to the person and written to the audit log.
 */
import { visibleText } from "../core/terminal_text.ts";
import { basename, dirname, join } from "../core/path.ts";

/** Workspace-relative paths watched, each with what runs it on the host. */
export const HOST_RUN_FILES: ReadonlyArray<{ path: string; runs: string }> = [
  { path: ".envrc", runs: "direnv, when a shell enters the folder" },
  { path: ".env", runs: "direnv, tern and many tools load it" },
  { path: ".vscode/tasks.json", runs: "VS Code tasks (some run when the folder opens)" },
  { path: ".vscode/settings.json", runs: "VS Code settings (interpreters, terminal env)" },
  { path: ".vscode/launch.json", runs: "VS Code debug launches" },
  { path: ".vscode/extensions.json", runs: "VS Code extension recommendations" },
  { path: ".idea/workspace.xml", runs: "JetBrains run configurations" },
  { path: ".devcontainer/devcontainer.json", runs: "dev container lifecycle commands" },
  { path: ".devcontainer.json", runs: "dev container lifecycle commands" },
  { path: "package.json", runs: "npm scripts (install hooks run on npm install)" },
  { path: ".npmrc", runs: "npm settings (script-shell, node-options)" },
  { path: ".yarnrc.yml", runs: "yarn (yarnPath runs a script)" },
  { path: ".yarnrc", runs: "yarn settings" },
  { path: ".pnpmfile.cjs", runs: "pnpm install hooks" },
  { path: "Makefile", runs: "make" },
  { path: "makefile", runs: "make" },
  { path: "GNUmakefile", runs: "make" },
  { path: "justfile", runs: "just" },
  { path: "Taskfile.yml", runs: "task" },
  { path: ".husky", runs: "git hooks through husky" },
  { path: ".pre-commit-config.yaml", runs: "pre-commit hooks" },
  { path: "pyproject.toml", runs: "Python build backends and tools" },
  { path: "setup.py", runs: "pip install" },
  { path: "setup.cfg", runs: "Python build settings" },
  { path: "conftest.py", runs: "pytest, on every test run" },
  { path: "noxfile.py", runs: "nox" },
  { path: "tox.ini", runs: "tox" },
  { path: "build.rs", runs: "cargo build" },
  { path: "build.gradle", runs: "gradle builds" },
  { path: "build.gradle.kts", runs: "gradle builds" },
  { path: "settings.gradle", runs: "gradle builds" },
  { path: "settings.gradle.kts", runs: "gradle builds" },
  { path: "gradlew", runs: "the gradle wrapper" },
  { path: "pom.xml", runs: "maven builds (plugins)" },
  { path: ".mvn", runs: "the maven wrapper and its settings" },
  { path: "Gemfile", runs: "bundler (Ruby code)" },
  { path: "Rakefile", runs: "rake" },
  { path: "CMakeLists.txt", runs: "cmake" },
  { path: ".pylintrc", runs: "pylint (init-hook runs Python)" },
  { path: ".venv/bin/activate", runs: "the shell that activates the virtualenv" },
  { path: ".cargo/config.toml", runs: "cargo (runners, aliases)" },
  { path: ".cargo/config", runs: "cargo (runners, aliases)" },
  { path: "mise.toml", runs: "mise (tasks, env hooks)" },
  { path: ".mise.toml", runs: "mise (tasks, env hooks)" },
  { path: ".tool-versions", runs: "asdf and mise" },
  { path: ".gitattributes", runs: "git filters and diff drivers" },
  { path: ".gitmodules", runs: "git submodule URLs" },
  { path: ".git/config", runs: "git (core.hooksPath, aliases, filters)" },
  { path: ".git/hooks", runs: "git hooks" },
  { path: ".github/workflows", runs: "CI on the next push" },
  { path: ".gitlab-ci.yml", runs: "CI on the next push (GitLab)" },
  { path: ".circleci", runs: "CI on the next push (CircleCI)" },
  { path: ".travis.yml", runs: "CI on the next push (Travis CI)" },
  { path: "Jenkinsfile", runs: "CI on the next push (Jenkins)" },
  { path: "azure-pipelines.yml", runs: "CI on the next push (Azure Pipelines)" },
  { path: "bitbucket-pipelines.yml", runs: "CI on the next push (Bitbucket Pipelines)" },
  { path: ".buildkite", runs: "CI on the next push (Buildkite)" },
  { path: "lefthook.yml", runs: "git hooks through lefthook" },
  { path: ".lefthook.yml", runs: "git hooks through lefthook" },
  { path: "deno.json", runs: "deno tasks, lint plugins and import maps" },
  { path: "deno.jsonc", runs: "deno tasks, lint plugins and import maps" },
  { path: "bunfig.toml", runs: "bun (preload scripts run at every start)" },
  { path: ".exrc", runs: "Vim with exrc, when it opens the folder" },
  { path: ".nvimrc", runs: "Neovim with exrc, when it opens the folder" },
  { path: ".nvim.lua", runs: "Neovim with exrc, when it opens the folder" },
  { path: ".zed", runs: "Zed tasks and settings" },
  { path: ".tern", runs: "tern's project config, prompts and skills" },
  { path: ".agents", runs: "skills the next agent session loads" },
  { path: ".claude", runs: "hooks, settings and skills tern and Claude Code load" },
  { path: ".mcp.json", runs: "MCP servers tern and other agents start" },
  { path: "AGENTS.md", runs: "the next agent session's instructions" },
  { path: "CLAUDE.md", runs: "the next agent session's instructions" },
  { path: "MEMORY.md", runs: "the next session's memory, in its system prompt" },
];

/** One watched path that changed. */
export interface HostFileChange {
  /** Absolute path. */
  path: string;
  change: "created" | "changed" | "removed";
  /** What runs it on the host. */
  runs: string;
}

/** Signatures of the watched paths: kind, size, mtime and inode; a folder's entries too. */
export type HostFileSnapshot = Map<string, string>;

/**
 * The watched paths under `root` as they are now, plus `gitDirs` (every `.git` and bare
 * repository found in the tree: a new one in a subfolder is a repository whose hooks and config
 * run on the host).
 * Taken before and after every command, so it is cheap: most watched paths do not exist, and
 * a failed `lstat` costs four times a successful one (the error object), so the folders that
 * hold them are listed once and only the names found there are looked at. Never throws.
 */
export function snapshotHostFiles(
  root: string,
  gitDirs: readonly string[] = [],
  pathDirs: readonly string[] = [],
): HostFileSnapshot {
  const snapshot: HostFileSnapshot = new Map();
  const listings = new Map<string, Listing>();
  const top = dirname(join(root, "x"));
  // A folder below the root whose name its parent's listing lacks is absent, unlisted.
  const listing = (dir: string): Listing => {
    let known = listings.get(dir);
    if (known !== undefined) return known;
    const parent = dirname(dir);
    const above = dir === top || parent === dir ? "unknown" : listing(parent);
    known = above === "absent" || (above !== "unknown" && !above.has(basename(dir)))
      ? "absent"
      : list(dir);
    listings.set(dir, known);
    return known;
  };
  for (const { path } of HOST_RUN_FILES) {
    const full = join(root, path);
    const names = listing(dirname(full));
    const absent = names === "absent" || (names !== "unknown" && !names.has(basename(full)));
    snapshot.set(full, absent ? "absent" : signature(full));
  }
  // A virtualenv's `site-packages`: Python runs its `.pth` files and `sitecustomize` at every
  // start of the venv's python, on the host too. Its own signature only (the folder is large):
  // a file added, removed or renamed there shows, one edited in place does not.
  const venvLib = join(root, ".venv", "lib");
  const versions = listing(venvLib);
  if (versions !== "absent" && versions !== "unknown") {
    for (const name of versions) {
      if (!name.startsWith("python")) continue;
      const dir = join(venvLib, name, "site-packages");
      snapshot.set(dir, ownSignature(dir));
    }
  }
  for (const dir of gitDirs) snapshot.set(dir, "git");
  // The person's PATH folders in the workspace: a shell started here runs their programs by name.
  for (const dir of pathDirs) snapshot.set(dir, signature(dir));
  return snapshot;
}

/**
 * The folders of `path` (a PATH) inside `root`, as written or by their real path: each holds
 * programs the person's shell runs by name, on the host (an activated `.venv/bin`).
 */
export function workspacePathDirs(root: string, path: string | undefined): string[] {
  const inside = (dir: string) =>
    dir === root || dir.startsWith(root.endsWith("/") ? root : `${root}/`);
  return [
    ...new Set(
      (path ?? "").split(":").filter((dir) => {
        if (!dir.startsWith("/")) return false;
        if (inside(dir)) return true;
        try {
          return inside(Deno.realPathSync(dir));
        } catch {
          return false;
        }
      }),
    ),
  ];
}

/** A folder's names; "absent" when there is no folder; "unknown" when it cannot be listed. */
type Listing = ReadonlySet<string> | "absent" | "unknown";

/** Beyond this many names a folder is not listed: its watched paths are looked at one by one. */
const MAX_LISTED = 2_000;

/**
 * The names in `dir` (following a link, as `lstat` of a path inside it does). A folder that
 * cannot be read but may be searched (mode `--x`) is "unknown", never "absent": the paths in it
 * are then looked at one by one, so a command cannot hide its changes by taking a folder's
 * read bit away.
 */
function list(dir: string): Listing {
  const names = new Set<string>();
  try {
    for (const entry of Deno.readDirSync(dir)) {
      if (names.size >= MAX_LISTED) return "unknown";
      names.add(entry.name);
    }
  } catch (error) {
    const gone = error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory;
    return gone ? "absent" : "unknown";
  }
  return names;
}

/** What changed from `before` to `after` (absent in one of them counts as "absent"). */
export function hostFileChanges(
  before: HostFileSnapshot,
  after: HostFileSnapshot,
): HostFileChange[] {
  const changes: HostFileChange[] = [];
  for (const path of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(path) ?? "absent";
    const is = after.get(path) ?? "absent";
    if (was === is) continue;
    const change = was === "absent" ? "created" : is === "absent" ? "removed" : "changed";
    changes.push({ path, change, runs: runsFor(path, was === "git" || is === "git") });
  }
  return changes.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

function runsFor(path: string, repository: boolean): string {
  if (repository) return "git (a repository's hooks and config)";
  if (path.endsWith("/site-packages")) {
    return "every start of the virtualenv's python (.pth files, sitecustomize)";
  }
  const entry = HOST_RUN_FILES.find((file) => path.endsWith(`/${file.path}`));
  return entry?.runs ?? "programs on your PATH (a shell run here finds them by name)";
}

function signature(path: string): string {
  const own = ownSignature(path);
  if (!own.startsWith("d:")) return own;
  // A folder's own mtime misses a file edited in place: take its entries' too (one level).
  const entries: string[] = [];
  try {
    for (const entry of Deno.readDirSync(path)) {
      if (entries.length >= 200) break;
      entries.push(`${entry.name}=${ownSignature(join(path, entry.name))}`);
    }
  } catch {
    // Unreadable: its own signature has to do.
  }
  return `${own};${entries.sort().join(",")}`;
}

function ownSignature(path: string): string {
  try {
    const info = Deno.lstatSync(path);
    const kind = info.isDirectory ? "d" : info.isSymlink ? "l" : "f";
    return `${kind}:${info.size}:${info.mtime?.getTime()}:${info.ino}`;
  } catch {
    return "absent";
  }
}

/**
 * A turn's changes for the person (`by` "background": those of background processes, told as
 * they are stopped): a heading and one line per path (what a hostile file name holds that a
 * terminal would obey or hide, zero-width and bidi characters too, made visible), or no lines.
 */
export function hostFileLines(
  changes: ReadonlyArray<HostFileChange>,
  options: { by?: "turn" | "background" } = {},
): string[] {
  if (changes.length === 0) return [];
  const heading = options.by === "background"
    ? "tern: background processes touched files that run code later; check them:"
    : "tern: this turn touched files that run code on your machine later; check them:";
  return [
    heading,
    ...changes.map((c) => `  ${c.change} ${visibleText(c.path)} (${c.runs})`),
  ];
}
