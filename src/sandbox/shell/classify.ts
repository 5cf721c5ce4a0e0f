/**
 * Labels shell commands by what they may do, so read-only ones (ls, cat, rg, git status) can run
 * without review while look-alikes (`find -exec`, `git -c`, `sed -i`, `sort -o`) cannot.
 */
import { otherRepositoryRisk } from "./_git.ts";
import { READ_ONLY_COMMANDS } from "./_read_only_table.ts";
import { assignmentRisk, type CommandRisk, risk, type RiskLabel, worse } from "./_risk.ts";
import { riskyCommandRisk } from "./_risky_table.ts";
import { commandName } from "./_wrappers.ts";
import { analyzeShell, type Redirect, type ShellAnalysis, type SimpleCommand } from "./parse.ts";

export type { CommandRisk, RiskLabel };

/** Output targets that write nothing anyone keeps. */
const HARMLESS_OUTPUTS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"]);

/** Wrappers that run the command as someone else. */
const PRIVILEGED_WRAPPERS = new Set(["sudo", "doas"]);

/** Builtins that move the shell to another folder. */
const DIRECTORY_CHANGES = new Set(["cd", "pushd", "popd"]);

/**
 * The risk of one simple command: its wrappers, environment assignments, redirections and the
 * program with its arguments; the most severe wins. A command not known to be read-only is
 * "unknown" at best. Never throws.
 */
export function classifyCommand(cmd: SimpleCommand): CommandRisk {
  return commandRisks(cmd, false).reduce(worse);
}

/**
 * Every finding for one command, the program's first. `moved`: the command line changes folder
 * (`cd sub && git status`), so git may find another repository there.
 */
function commandRisks(cmd: SimpleCommand, moved: boolean): CommandRisk[] {
  const privileged = cmd.wrappers.filter((w) => PRIVILEGED_WRAPPERS.has(w)).map((w) =>
    risk("privileged", `"${w}" runs "${cmd.argv[0]}" as another user`)
  );
  const others = [
    ...privileged,
    assignmentRisk(cmd.assignments, { shellOnly: cmd.argv.length === 0 }),
    ...cmd.redirects.map(redirectRisk),
    directoryRisk(cmd, moved),
  ];
  return [programRisk(cmd), ...others.filter((found) => found !== undefined)];
}

function programRisk(cmd: SimpleCommand): CommandRisk {
  if (cmd.argv.length === 0) {
    return risk(
      "read-only",
      cmd.assignments.length > 0 ? "sets shell variables" : "only redirects",
    );
  }
  const written = cmd.argv[0];
  const name = commandName(written);
  const args = cmd.argv.slice(1);
  if (cmd.expands[0]) {
    return risk("runs-code", `the command name "${written}" is only known when it runs`);
  }
  if (name.startsWith("((")) return risk("read-only", "arithmetic");
  if (name.includes("/")) return risk("runs-code", `runs the program "${written}"`);
  const entry = READ_ONLY_COMMANDS[name];
  if (!entry) {
    return riskyCommandRisk(name, args) ??
      risk("unknown", `"${name}" is not known to be read-only`);
  }
  const unsure = entry.anyArgs ? undefined : unsureArguments(cmd, name);
  const findings = [unsure, entry.check?.(args)].filter((found) => found !== undefined);
  if (findings.length > 0) return findings.reduce(worse);
  return risk("read-only", `"${name}" only reads`);
}

/** Arguments bash may turn into options (`find *` with a file named `-delete`). */
function unsureArguments(cmd: SimpleCommand, name: string): CommandRisk | undefined {
  if (cmd.expands.slice(1).some(Boolean)) {
    return risk("unknown", `"${name}" has an argument only known when it runs`);
  }
  if (cmd.wrappers.includes("xargs")) return risk("unknown", `xargs adds arguments to "${name}"`);
  return undefined;
}

/** git run in another folder uses the repository there, whose config can run programs. */
function directoryRisk(cmd: SimpleCommand, moved: boolean): CommandRisk | undefined {
  if (cmd.argv.length === 0 || cmd.expands[0] || commandName(cmd.argv[0]) !== "git") {
    return undefined;
  }
  if (cmd.chdir) return otherRepositoryRisk("env --chdir");
  return moved ? otherRepositoryRisk("cd") : undefined;
}

function changesDirectory(cmd: SimpleCommand): boolean {
  return cmd.argv.length > 0 && DIRECTORY_CHANGES.has(commandName(cmd.argv[0]));
}

/**
 * `>`/`>>` to a file writes it; `/dev/tcp/…` is a network connection, and so may be a file only
 * known when it runs (`cat < $x`, x=/dev/tcp/host/80).
 */
export function redirectRisk(redirect: Redirect): CommandRisk | undefined {
  const { op, target } = redirect;
  if (op.startsWith("<<")) return undefined;
  if (/^\/dev\/(tcp|udp)\//.test(target)) {
    return risk("network", `redirection to "${target}" opens a network connection`);
  }
  if (/^\d*<$/.test(op) && /[$`]/.test(target)) {
    return risk("network", `redirection from "${target}" may open a network connection`);
  }
  const duplicates = /[<>]&-$/.test(op) || /[<>]&$/.test(op) && /^(\d+|-)$/.test(target);
  if (!op.includes(">") || duplicates || HARMLESS_OUTPUTS.has(target)) return undefined;
  return risk("writes-files", `redirection "${op}" writes "${target}"`);
}

/** How risky a whole command line is. */
export interface ShellRisk {
  /** Every part is read-only, nothing is hidden, and it parsed. */
  readOnly: boolean;
  /** The most severe label of all parts. */
  label: RiskLabel;
  /** Why it is not read-only, one line per finding; empty when it is. */
  reasons: string[];
  analysis: ShellAnalysis;
}

/**
 * Parses and classifies a command line. A parse failure is "unknown"; hidden code (`$( )`,
 * `eval`, `bash -c`, ...) is at least "runs-code", even when the hidden commands only read.
 * Never throws except when the bash grammar cannot load.
 */
export async function classifyShell(command: string): Promise<ShellRisk> {
  const analysis = await analyzeShell(command);
  if (!analysis.ok) {
    return { readOnly: false, label: "unknown", reasons: [analysis.error], analysis };
  }
  const risks = [
    ...analysis.opaque.map((reason) => risk("runs-code", `hides code: ${reason}`)),
    ...analysis.commands.flatMap((cmd) =>
      commandRisks(cmd, analysis.commands.some(changesDirectory))
    ),
  ];
  const label = risks.reduce(worse, risk("read-only", "")).label;
  const reasons = risks.filter((r) => r.label !== "read-only").map((r) => r.reason);
  return { readOnly: label === "read-only", label, reasons: [...new Set(reasons)], analysis };
}
