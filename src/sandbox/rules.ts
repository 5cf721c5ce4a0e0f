/**
 * Permission rules from config, compiled once: each rule's `match`/`notMatch` examples are
 * checked against the rule itself when it loads, so a rule that does not do what its author
 * wrote down fails at start-up instead of silently at the wrong call.
 */
// @ts-types="@types/picomatch"
import type Picomatch from "picomatch";
import { basename } from "../core/path.ts";
import { ConfigError } from "../config/errors.ts";
import type { PermissionRule } from "../config/schema.ts";
import { classifyCommand, redirectRisk } from "./shell/classify.ts";
import {
  analyzeShell,
  commandName,
  type ShellAnalysis,
  type SimpleCommand,
} from "./shell/parse.ts";
import { assignmentRisk } from "./shell/_risk.ts";
import { GIT_VALUE_OPTIONS } from "./shell/_git.ts";
import { SHELLS } from "./shell/_hidden_code.ts";
import { RULE_PATH_OPTIONS, rulePathGlobs, rulePathReach, toolMatcher } from "./rule_match.ts";
import { isMcpToolName } from "../mcp/tool_names.ts";

/** A rule ready to match calls. */
export interface CompiledRule {
  readonly action: PermissionRule["action"];
  /** How the rule reads in messages and the audit log: `deny command "git push"`. */
  readonly label: string;
  readonly reason?: string;
  /** The project file that holds the rule; absent for the person's own (`PermissionRule.from`). */
  readonly from?: string;
  /** The tool the rule applies to; "*" for any; `*` inside matches any run (`mcp__github__*`). */
  readonly tool: string;
  /** True for a tool name `tool` covers (compiled once: `*` inside matches any run). */
  readonly matchesTool: (name: string) => boolean;
  /** Words of a command prefix (`*` matches any one word), for bash calls. */
  readonly words?: readonly string[];
  /**
   * Matches a workspace-relative path, for calls that name one: for a deny or ask rule, also
   * each path below one it matches (`rulePathGlobs`).
   */
  readonly path?: (relative: string) => boolean;
  /**
   * The `path` is written as an absolute path (`/srv/app/.env`): a deny or ask rule matches it
   * against the call's absolute path (`RuleSubject.absolute`).
   */
  readonly absolute?: true;
  /**
   * For a deny rule's absolute `path`: true for an absolute path it matches, one below a match,
   * or a folder that may hold a match (`rulePathReach`). Such a rule refuses a grant of any.
   */
  readonly reaches?: (absolute: string) => boolean;
  /** What a `request_permissions` rule lists (paths as written: `~/`, `<workspace>`). */
  readonly grants?: {
    read?: readonly string[];
    write?: readonly string[];
    hosts?: readonly string[];
    env?: readonly string[];
    commands?: readonly string[];
  };
}

/** What a rule is matched against: one call, already analysed. */
export interface RuleSubject {
  tool: string;
  /** The workspace-relative path the call names, if any. */
  path?: string;
  /** The same path, absolute: what a deny or ask rule's absolute pattern (`/etc/x`) is about. */
  absolute?: string;
  /** The parsed command of a bash call. */
  shell?: ShellAnalysis;
}

/**
 * Compiles `rules` and checks every `match`/`notMatch` example.
 * @throws {ConfigError} naming the rule (by position and text) and the example that failed.
 */
export async function compileRules(rules: readonly PermissionRule[]): Promise<CompiledRule[]> {
  // The glob matcher loads only for rules with a path: the policy imports this module on every
  // run's first tool call, most of them without such rules.
  const picomatch = rules.some((rule) => rule.path !== undefined)
    ? (await import("picomatch") as { default: typeof Picomatch }).default
    : undefined;
  const compiled: CompiledRule[] = [];
  for (const [index, rule] of rules.entries()) {
    const one = compileRule(rule, picomatch);
    const misnamed = misnamedTool(one.tool) ?? unexpandedPath(rule.path);
    if (misnamed !== undefined) {
      throw new ConfigError(
        `Invalid permission rule ${index + 1} (${one.label}): ${misnamed}`,
        { key: "rules" },
      );
    }
    for (const example of rule.match ?? []) {
      if (!ruleApplies(one, await exampleSubject(one, example))) {
        throw badExample(index, one, example, "should match but does not");
      }
    }
    for (const example of rule.notMatch ?? []) {
      if (ruleApplies(one, await exampleSubject(one, example))) {
        throw badExample(index, one, example, "should not match but does");
      }
    }
    compiled.push(one);
  }
  return compiled;
}

/**
 * True when `rule` applies to `subject`. A command rule applies to a bash call when any of its
 * simple commands (substitutions included) starts with the rule's words, the command's name
 * compared without its folder (`/bin/rm`, `./rm`) and git's helpers read as git (`git-push`) —
 * except an allow rule, which must cover every simple command of a command that parsed, hides
 * nothing and passes `plainCommand`, each named exactly as the rule names it.
 */
export function ruleApplies(rule: CompiledRule, subject: RuleSubject): boolean {
  if (!rule.matchesTool(subject.tool)) return false;
  if (rule.path !== undefined) {
    // A deny or ask rule's absolute pattern is about the absolute path; an allow rule covers
    // workspace-relative paths only, never reaching a granted folder.
    const path = rule.absolute && rule.action !== "allow" ? subject.absolute : subject.path;
    if (path === undefined || subject.path === undefined || !rule.path(path)) return false;
  }
  if (rule.words !== undefined) {
    const shell = subject.shell;
    if (shell === undefined || !shell.ok) return false;
    const hits = shell.commands.map((command) =>
      rule.action === "allow"
        ? allowedBy(command.argv, rule.words!)
        : namedBy(command.argv, rule.words!)
    );
    if (rule.action !== "allow") return hits.some(Boolean);
    if (!shell.commands.every(plainCommand)) return false;
    return shell.opaque.length === 0 && hits.length > 0 && hits.every(Boolean);
  }
  return true;
}

/** True when every simple command of `shell` is covered by one of the allow rules. */
export function allowRulesCover(rules: readonly CompiledRule[], shell: ShellAnalysis): boolean {
  if (!shell.ok || shell.opaque.length > 0 || shell.commands.length === 0) return false;
  if (!shell.commands.every(plainCommand)) return false;
  const allows = rules.filter((rule) => rule.action === "allow" && rule.words !== undefined);
  return shell.commands.every((command) =>
    allows.some((rule) => allowedBy(command.argv, rule.words!))
  );
}

/**
 * Why no one can tell whether `shell` runs what the command deny rule `rule` names, or undefined
 * when it can be told. A deny rule matches words, so it cannot see a command whose name or
 * arguments exist only when it runs (`r=rm; $r x`, `git $(echo push)`), code tern could not
 * read (`eval "$x"`, `coproc`, `git -c alias.p=push p`, `source /dev/stdin`), or a program the rule names run with
 * variables that may change what it runs (`HOME=evil git p`, a repository's alias) or with
 * arguments xargs adds.
 */
export function unseenByDenyRule(rule: CompiledRule, shell: ShellAnalysis): string | undefined {
  if (rule.action !== "deny" || rule.words === undefined || !shell.ok) return undefined;
  if (shell.unseen.length > 0) return shell.unseen[0];
  const streamed = shell.commands.map(streamedCode).find((found) => found !== undefined);
  if (streamed !== undefined) return streamed;
  const passed = shell.commands.map((command) => passedOn(command, rule.words!)).find(Boolean);
  if (passed !== undefined) return passed;
  const exported = shell.commands.map(exportedRisk).find((found) => found !== undefined);
  for (const command of shell.commands) {
    if (!namedBy(command.argv, rule.words.slice(0, 1))) continue;
    const name = command.argv[0];
    // Only words that may land where the rule's words are matter (`git add *.ts` is no push).
    const prefix = prefixLength(command.argv, rule.words.length);
    const expanding = command.argv.find((_, i) => command.expands[i] && i < prefix);
    if (expanding !== undefined) return `"${name}" has the argument "${expanding}"`;
    if (command.wrappers.includes("xargs") && command.argv.length < prefix) {
      return `xargs adds arguments to "${name}"`;
    }
    const variables = assignmentRisk(command.assignments) ?? exported;
    if (variables) return `"${name}" runs with a variable set: ${variables.reason}`;
  }
  return undefined;
}

/** Risks of a program that may run the words it is given as a command. */
const MAY_RUN_ARGUMENTS = new Set(["unknown", "runs-code"]);

/**
 * Why `command`, a program not known to run only what it says (not read-only, not a wrapper tern
 * peels), may run what the rule's `words` name from its own arguments (`flock /tmp/l touch x`,
 * `taskset 1 git push`, `busybox rm -rf x`); else undefined. Programs that run the rest of their
 * command line are many, so any unvetted one that carries the words is taken to run them.
 */
function passedOn(command: SimpleCommand, words: readonly string[]): string | undefined {
  if (command.argv.length < 2 || words[0] === "*") return undefined;
  if (namedBy(command.argv, words.slice(0, 1))) return undefined;
  const at = command.argv.findIndex((_, i) => i > 0 && namedBy(command.argv.slice(i), words));
  if (at === -1 || !MAY_RUN_ARGUMENTS.has(classifyCommand(command).label)) return undefined;
  return `"${command.argv[0]}" may run "${command.argv.slice(at, at + words.length).join(" ")}" ` +
    "from its arguments";
}

/** A file a shell or `source` may read code from that is a stream or a process substitution. */
const CODE_STREAM = /^(?:\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/[^/]+\/fd\/\d+|[<>]\()/;

/**
 * Why `command` runs code only known when it runs, read from a stream (`source /dev/stdin <<<
 * "git push"`, `sh /dev/fd/0`, `. <(curl …)`), as `bash` reading standard input does; else
 * undefined.
 */
function streamedCode(command: SimpleCommand): string | undefined {
  const name = commandName(command.argv[0] ?? "");
  if (name !== "source" && name !== "." && !SHELLS.has(name)) return undefined;
  const stream = command.argv.slice(1).find((word) => CODE_STREAM.test(word));
  return stream === undefined ? undefined : `"${name}" runs code it reads from "${stream}"`;
}

/** How many words of `argv` a rule of `words` words compares, git's global options included. */
function prefixLength(argv: readonly string[], words: number): number {
  return argv.length - withoutGlobalOptions(argv).length + words;
}

/** A variable a command line puts into the environment of later commands (`HOME=x; git p`). */
function exportedRisk(command: SimpleCommand) {
  if (command.argv.length === 0) return assignmentRisk(command.assignments, { shellOnly: true });
  const declares = ["export", "declare", "typeset", "local", "readonly"];
  if (command.expands[0] || !declares.includes(commandName(command.argv[0]))) return undefined;
  return assignmentRisk(command.argv.slice(1), { names: true });
}

/**
 * The `command` of each allow rule that together would cover `shell` ({@linkcode allowRulesCover}):
 * the first two words of each simple command (one when the second is not written out plainly),
 * once each; undefined when no allow rules can cover it (it hides code, runs through sudo or sets
 * a risky variable, or a command's name is not written out).
 */
export function coveringRuleCommands(shell: ShellAnalysis): string[] | undefined {
  if (!shell.ok || shell.opaque.length > 0 || shell.commands.length === 0) return undefined;
  const commands: string[] = [];
  for (const command of shell.commands) {
    if (!plainCommand(command) || command.argv.length === 0) return undefined;
    // A rule's words are split at blanks and `*` is any word: only words written out plainly
    // can be named, the first two at most (the second left out when it cannot be).
    const words: string[] = [];
    for (const [i, word] of command.argv.slice(0, 2).entries()) {
      const name = i === 0 ? commandName(word) : word;
      if (command.expands[i] || name === "*" || !/^[^\s"'\\]+$/.test(name)) break;
      words.push(name);
    }
    if (words.length === 0) return undefined;
    const text = words.join(" ");
    if (!commands.includes(text)) commands.push(text);
  }
  return commands;
}

/**
 * True when `command` may be allowed by its words alone (allow rules, session approvals): it is
 * not run through `sudo`/`doas`, sets no variable but the few known to be harmless (`LANG`,
 * `TZ`, `NO_COLOR`…; `HOME=evil`, `GIT_SSH_COMMAND=…`, `FOO=1` may turn an allowed command into
 * any command), runs in the folder it was given (`env -C vendor/x git commit` runs another
 * repository's hooks and `npm test` another package's scripts, as `git -C` would), and
 * redirects its output to no file (`npm test > package.json`) other than `/dev/null` and the
 * standard streams.
 */
export function plainCommand(command: SimpleCommand): boolean {
  const privileged = command.wrappers.some((wrapper) => wrapper === "sudo" || wrapper === "doas");
  return !privileged && !command.chdir && assignmentRisk(command.assignments) === undefined &&
    command.redirects.every((redirect) => redirectRisk(redirect) === undefined);
}

function compileRule(rule: PermissionRule, picomatch?: typeof Picomatch): CompiledRule {
  const tool = rule.tool ?? (rule.command !== undefined ? "bash" : "*");
  const parts: string[] = [rule.action];
  if (rule.tool !== undefined) parts.push(`tool "${rule.tool}"`);
  if (rule.command !== undefined) parts.push(`command "${rule.command}"`);
  if (rule.path !== undefined) parts.push(`path "${rule.path}"`);
  const grants = grantLists(rule);
  for (const [key, list] of Object.entries(grants ?? {})) {
    parts.push(`${key} ${JSON.stringify(list)}`);
  }
  const compiled: {
    action: PermissionRule["action"];
    label: string;
    reason?: string;
    from?: string;
    tool: string;
    matchesTool: (name: string) => boolean;
    words?: string[];
    path?: (relative: string) => boolean;
    absolute?: true;
    reaches?: (absolute: string) => boolean;
    grants?: CompiledRule["grants"];
  } = { action: rule.action, label: parts.join(" "), tool, matchesTool: toolMatcher(tool) };
  if (grants !== undefined) compiled.grants = grants;
  if (rule.reason !== undefined) compiled.reason = rule.reason;
  if (rule.from !== undefined) compiled.from = rule.from;
  if (rule.command !== undefined) compiled.words = rule.command.trim().split(/\s+/);
  if (rule.path !== undefined) {
    // A path rule without its matcher would match nothing: a deny rule that denies nothing.
    if (picomatch === undefined) throw new Error(`Cannot compile ${compiled.label}: no matcher`);
    compiled.path = picomatch(rulePathGlobs(rule.path, rule.action !== "allow"), RULE_PATH_OPTIONS);
    if (rule.path.startsWith("/")) {
      compiled.absolute = true;
      if (rule.action === "deny") compiled.reaches = rulePathReach(rule.path, picomatch);
    }
  }
  return compiled;
}

/** The lists of a `request_permissions` rule (normalised command prefixes); none for others. */
function grantLists(rule: PermissionRule): CompiledRule["grants"] {
  if (rule.tool !== "request_permissions") return undefined;
  const grants: Record<string, readonly string[]> = {};
  for (const key of ["read", "write", "hosts", "env", "commands"] as const) {
    const list = rule[key];
    if (list === undefined) continue;
    // Command prefixes compare as request_permissions normalises them: the first two words.
    grants[key] = key === "commands"
      ? list.map((c) => c.trim().split(/\s+/).slice(0, 2).join(" "))
      : list.map((entry) => entry.trim());
  }
  return grants;
}

/**
 * Command words match the rule's words, the command name as `name` gives it. `*` is any word.
 */
function startsWith(
  argv: readonly string[],
  words: readonly string[],
  name: (written: string) => string,
): boolean {
  if (argv.length < words.length) return false;
  return words.every((word, i) => word === "*" || (i === 0 ? name(argv[0]) : argv[i]) === word);
}

/**
 * For deny and ask rules: the command's name without its folder (`./tools/rm`, `/bin/rm`) and
 * in any case (`GIT`), with and without git's global options (`git -C dir push`), and a git
 * helper as git (`/usr/lib/git-core/git-push` is `git push`).
 */
function namedBy(argv: readonly string[], words: readonly string[]): boolean {
  // In any case: on a case-insensitive file system (macOS) `GIT push` runs git.
  const name = (written: string) => basename(written).toLowerCase();
  const folded = words.map((word, i) => i === 0 ? word.toLowerCase() : word);
  const helper = /^git-([a-z][a-z0-9-]*)$/.exec(name(argv[0] ?? ""));
  const forms = [argv, withoutGlobalOptions(argv)];
  if (helper) forms.push(["git", helper[1], ...argv.slice(1)]);
  return forms.some((form) => startsWith(form, folded, name));
}

/**
 * For allow rules: a rule naming a bare program (`npm test`) covers only that program found on
 * PATH (or in a system bin folder: `/usr/bin/npm`), never `./npm` or `tools/npm` from the
 * workspace; a rule naming a path (`./scripts/test.sh`) covers exactly that path.
 */
function allowedBy(argv: readonly string[], words: readonly string[]): boolean {
  if (argv.length === 0) return false;
  const name = commandName(argv[0]);
  if (words[0] === "*" && name.includes("/")) return false;
  return startsWith(argv, words, (written) => words[0] === written ? written : name);
}

/**
 * argv with git's global options removed, so a deny or ask rule for `git push` also sees
 * `git -C dir push` and `git --no-pager push`. Never used for allow rules: those options can
 * change what git runs, so an allow rule must match the command as written.
 */
function withoutGlobalOptions(argv: readonly string[]): readonly string[] {
  if (argv.length === 0 || basename(argv[0]).toLowerCase() !== "git") return argv;
  let i = 1;
  while (i < argv.length && argv[i].startsWith("-")) i += GIT_VALUE_OPTIONS.has(argv[i]) ? 2 : 1;
  return [argv[0], ...argv.slice(i)];
}

async function exampleSubject(rule: CompiledRule, example: string): Promise<RuleSubject> {
  if (rule.words !== undefined) {
    return { tool: rule.tool === "*" ? "bash" : rule.tool, shell: await analyzeShell(example) };
  }
  if (rule.path !== undefined) {
    return { tool: rule.tool === "*" ? "read" : rule.tool, path: example, absolute: example };
  }
  return { tool: example };
}

/**
 * Why a rule's `tool` can match no tool, else undefined: with a capital letter outside an MCP
 * tool's name (`mcp__server__Tool`), as tern's own tools are lower case. Claude Code's `Bash`
 * or `WebFetch` in a deny rule would deny nothing, silently.
 */
function misnamedTool(tool: string): string | undefined {
  if (isMcpToolName(tool) || !/[A-Z]/.test(tool)) return undefined;
  const meant = tool.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
  return `no tool is named "${tool}": tern's tools are lower case (did you mean "${meant}"?)`;
}

/**
 * Why a rule's `path` can match no path, else undefined: one starting with `~` or a variable
 * (`~/.aws`, `$HOME/.aws`), which nothing expands, so it would be read as a folder of the
 * workspace named `~`. A deny rule written so would deny nothing, silently.
 */
function unexpandedPath(path: string | undefined): string | undefined {
  if (path === undefined || !/^[~$]/.test(path.trim())) return undefined;
  return `the path "${path}" is not expanded (no "~" or variables in a rule's path): write it ` +
    "in full from /, or relative to the workspace";
}

function badExample(index: number, rule: CompiledRule, example: string, what: string) {
  return new ConfigError(
    `Invalid permission rule ${index + 1} (${rule.label}): example "${example}" ${what}; ` +
      "fix the rule or its match/notMatch examples",
    { key: "rules" },
  );
}
