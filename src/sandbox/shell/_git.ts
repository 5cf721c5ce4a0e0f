/** Which git command lines only read: `git status` does, `git -c core.pager=x log` does not. */
import { findOption, type OptionSpec, parseArgs } from "./_options.ts";
import { type CommandRisk, risk, worse } from "./_risk.ts";

/** Global options that change nothing about what git may run. */
const HARMLESS_GLOBALS = new Set([
  "--no-pager",
  "-P",
  "-p",
  "--paginate",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--no-replace-objects",
  "--version",
]);

type SubcommandCheck = (args: readonly string[], sub: string) => CommandRisk | undefined;

const readOnly: SubcommandCheck = () => undefined;

const SUBCOMMANDS: Readonly<Record<string, SubcommandCheck>> = {
  status: readOnly,
  diff: readOnly,
  log: readOnly,
  show: readOnly,
  shortlog: readOnly,
  blame: readOnly,
  "rev-parse": readOnly,
  "rev-list": readOnly,
  "ls-files": readOnly,
  "ls-tree": readOnly,
  "cat-file": readOnly,
  "merge-base": readOnly,
  "name-rev": readOnly,
  describe: readOnly,
  "for-each-ref": readOnly,
  "show-ref": readOnly,
  "check-ignore": readOnly,
  "count-objects": readOnly,
  version: readOnly,
  grep: (args) => {
    const pager = findOption(parseArgs(args), "-O", "--open-files-in-pager");
    return pager ? risk("runs-code", `"git grep ${pager.name}" runs a pager program`) : undefined;
  },
  branch: (args, sub) =>
    listOnly(
      args,
      sub,
      {
        long: ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort"],
      },
      ["-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force"]
        .concat(["-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "--track"]),
    ),
  tag: (args, sub) =>
    listOnly(args, sub, { short: "umF", long: ["--message", "--file", "--sort", "--contains"] }, [
      ...["-a", "-s", "-u", "-f", "-d", "-v", "-m", "-F", "-e", "--annotate", "--sign"],
      ...["--delete", "--verify", "--message", "--file", "--force", "--edit", "--local-user"],
    ]),
  remote: remoteRisk,
  config: configRisk,
  stash: (args) => subcommandIn(args, ["list", "show"], "stash"),
  worktree: (args) => subcommandIn(args, ["list"], "worktree"),
  reflog: (args) => args.length === 0 ? undefined : subcommandIn(args, ["show"], "reflog"),
};

const NETWORK = new Set(["fetch", "pull", "push", "clone", "ls-remote", "submodule"]);
const DESTRUCTIVE = new Set(["clean"]);

/** git's global options that take the next word as their value (`git -C dir push`). */
export const GIT_VALUE_OPTIONS: ReadonlySet<string> = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
]);

/** Global options that make git use another repository, and so that repository's config. */
const OTHER_REPOSITORY = ["-C", "--git-dir", "--work-tree"];

/**
 * The risk of `git <args>`, or undefined when it only reads. Repository config can still make
 * read-only commands run programs (`core.fsmonitor`): only the workspace's own repository counts
 * as read-only, whose `.git/config` bubblewrap keeps read-only. A repository elsewhere (`-C dir`,
 * `--git-dir`, `--work-tree`, or a folder a `cd` moved to; see `classify.ts`) may be one a
 * tarball or a command put there, config included.
 */
export function gitRisk(args: readonly string[]): CommandRisk | undefined {
  let i = 0;
  let elsewhere: CommandRisk | undefined;
  for (; i < args.length && args[i].startsWith("-"); i++) {
    const name = args[i].split("=")[0];
    if (OTHER_REPOSITORY.includes(name)) {
      const equals = args[i].indexOf("=");
      const value = equals >= 0 ? args[i].slice(equals + 1) : args[++i];
      if (name !== "-C" || value !== ".") elsewhere ??= otherRepositoryRisk(`git ${name}`);
      continue;
    }
    if (/^-c/.test(name) || name === "--config-env") {
      const flag = name === "--config-env" ? name : "-c";
      return risk("runs-code", `"git ${flag}" can set options that run commands`);
    }
    if (name === "--exec-path") {
      return risk("runs-code", `"git --exec-path" can run other programs`);
    }
    if (!HARMLESS_GLOBALS.has(name)) {
      return risk("unknown", `"git ${name}" is not known to be read-only`);
    }
  }
  const found = subcommandRisk(args[i], args.slice(i + 1));
  return found && elsewhere ? worse(found, elsewhere) : found ?? elsewhere;
}

function subcommandRisk(sub: string | undefined, rest: readonly string[]): CommandRisk | undefined {
  if (sub === undefined) return undefined;
  const check = SUBCOMMANDS[sub];
  if (check) return outputRisk(rest, sub) ?? check(rest, sub);
  if (NETWORK.has(sub)) return risk("network", `"git ${sub}" uses the network`);
  if (DESTRUCTIVE.has(sub)) return risk("destructive", `"git ${sub}" deletes untracked files`);
  if (sub === "reset" && rest.includes("--hard")) {
    return risk("destructive", `"git reset --hard" discards changes`);
  }
  return risk("writes-files", `"git ${sub}" is not a read-only git command`);
}

/** `what` ("git -C", "cd") makes git read the config of a repository that may not be the workspace's. */
export function otherRepositoryRisk(what: string): CommandRisk {
  return risk(
    "runs-code",
    `"${what}" makes git use the config of another repository, which can run programs`,
  );
}

/**
 * `--output` and `--ext-diff`, which every command taking diff or log options has: `git blame`,
 * `git rev-list`, `git stash list` and `git stash show` write `--output=FILE` as `git log` does.
 */
function outputRisk(args: readonly string[], sub: string): CommandRisk | undefined {
  const parsed = parseArgs(args);
  const output = findOption(parsed, "--output");
  if (output) return risk("writes-files", `"git ${sub} ${output.name}" writes a file`);
  const external = findOption(parsed, "--ext-diff");
  if (external) {
    return risk("runs-code", `"git ${sub} ${external.name}" runs an external diff program`);
  }
  return undefined;
}

/** `git branch`/`git tag`: listing only; a name without `--list` creates one. */
function listOnly(
  args: readonly string[],
  sub: string,
  spec: OptionSpec,
  writing: readonly string[],
): CommandRisk | undefined {
  const parsed = parseArgs(args, spec);
  const writer = findOption(parsed, ...writing);
  if (writer) return risk("writes-files", `"git ${sub} ${writer.name}" does more than list`);
  // What makes the operands patterns counts only when written out whole.
  const listing = parsed.options.some((o) => o.name === "-l" || o.name === "--list");
  if (parsed.operands.length > 0 && !listing) {
    return risk("writes-files", `"git ${sub} ${parsed.operands[0]}" creates a ${sub}`);
  }
  return undefined;
}

function subcommandIn(args: readonly string[], allowed: string[], sub: string) {
  if (allowed.includes(args[0])) return undefined;
  const command = args[0] ? `git ${sub} ${args[0]}` : `git ${sub}`;
  return risk("writes-files", `"${command}" changes the repository`);
}

/** `git remote` and `git remote -v` list; `git remote -v add x url` adds, as without `-v`. */
function remoteRisk(args: readonly string[]): CommandRisk | undefined {
  const at = args.findIndex((arg) => arg !== "-v" && arg !== "--verbose");
  const sub = at < 0 ? undefined : args[at];
  if (sub === undefined || sub === "get-url") return undefined;
  return risk(sub === "show" ? "network" : "writes-files", `"git remote ${sub}" is not a listing`);
}

/**
 * `git config`'s options that take the next word as their value (`--file f`). git reads
 * options only up to the first other word.
 */
const CONFIG_OPTIONS: OptionSpec = {
  short: "ft",
  long: ["--file", "--blob", "--type", "--default", "--comment", "--value", "--url"],
  operandEnds: true,
};

/** The actions that only read, written out whole. */
const CONFIG_READS = /^(?:--get(?:-all|-regexp|-urlmatch)?|--list|-l)$/;

/** Actions that change settings or open an editor. */
const CONFIG_WRITES = ["--add", "--replace-all", "--unset", "--unset-all", "--rename-section"]
  .concat(["--remove-section", "-e", "--edit"]);

/**
 * `git config --get x`, `git config --list` and `git config get x` read; anything else sets.
 * An action after the first other word is a value: `git config core.pager x --list` sets
 * core.pager, and `git config core.editor list` sets core.editor to "list".
 */
function configRisk(args: readonly string[]): CommandRisk | undefined {
  const parsed = parseArgs(args, CONFIG_OPTIONS);
  const writer = findOption(parsed, ...CONFIG_WRITES);
  if (writer) return risk("writes-files", `"git config ${writer.name}" changes settings`);
  const reads = parsed.options.some((option) => CONFIG_READS.test(option.name)) ||
    ["get", "list"].includes(parsed.operands[0]);
  return reads
    ? undefined
    : risk("writes-files", `"git config" without --get or --list changes settings`);
}
