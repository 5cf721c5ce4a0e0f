/** Risk labels, their order, and the small helpers every classification table uses. */

/** What running a command may do, from harmless to most dangerous (see `SEVERITY`). */
export type RiskLabel =
  | "read-only"
  | "writes-files"
  | "network"
  | "destructive"
  | "runs-code"
  | "privileged"
  | "unknown";

/** A label and why: `{label: "runs-code", reason: '"find -exec" runs other commands'}`. */
export interface CommandRisk {
  label: RiskLabel;
  reason: string;
}

/** Labels from least to most severe; "unknown" is an unvetted program, so below "runs-code". */
const SEVERITY: readonly RiskLabel[] = [
  "read-only",
  "writes-files",
  "network",
  "unknown",
  "runs-code",
  "destructive",
  "privileged",
];

/** The more severe of two risks (the first when equal). */
export function worse(a: CommandRisk, b: CommandRisk): CommandRisk {
  return SEVERITY.indexOf(b.label) > SEVERITY.indexOf(a.label) ? b : a;
}

/** Shorthand for a risk. */
export function risk(label: RiskLabel, reason: string): CommandRisk {
  return { label, reason };
}

const CODE_VARIABLES = new Set([
  "PATH",
  "ENV",
  "BASH_ENV",
  "PROMPT_COMMAND",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PYTHONSTARTUP",
  "PYTHONPATH",
  "PYTHONHOME",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "PAGER",
  "MANPAGER",
  "EDITOR",
  "VISUAL",
  "SSH_ASKPASS",
  "LESSOPEN",
  "LESSCLOSE",
  "GCONV_PATH",
]);

/** Prefixes of variables that load libraries or configure git (`GIT_CONFIG_*`, `GIT_SSH_COMMAND`). */
const CODE_PREFIXES = ["LD_", "DYLD_", "GIT_", "BASH_FUNC_"];

/**
 * Whether setting this environment variable can make an ordinary program run other code
 * (`LD_PRELOAD`, `BASH_ENV`, `GIT_CONFIG_*`, `NODE_OPTIONS`, `PATH`, ...).
 */
export function isCodeVariable(name: string): boolean {
  return CODE_VARIABLES.has(name) || CODE_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The risk of `NAME=value` words (as written), or undefined when none loads code. */
export function assignmentRisk(assignments: readonly string[]): CommandRisk | undefined {
  for (const assignment of assignments) {
    const name = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=/.exec(assignment)?.[1];
    if (name && isCodeVariable(name)) {
      return risk("runs-code", `"${name}" in the environment can make programs run other code`);
    }
  }
  return undefined;
}
