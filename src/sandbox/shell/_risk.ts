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

/**
 * Variables known to change no program's choice of what to load or run: the locale, the time
 * zone, the terminal's type and size, and colour switches. Every other variable may: `HOME` and
 * `XDG_CONFIG_HOME` move git's config (aliases, `core.fsmonitor`), `RIPGREP_CONFIG_PATH` gives
 * rg `--pre`, `LD_PRELOAD`, `PAGER`, `GIT_*`, `NODE_OPTIONS`… run code outright, and programs
 * add such variables all the time, so a list of dangerous names is never complete.
 */
const HARMLESS_VARIABLES: ReadonlySet<string> = new Set([
  "LANG",
  "LANGUAGE",
  "TZ",
  "TERM",
  "COLORTERM",
  "NO_COLOR",
  "FORCE_COLOR",
  "CLICOLOR",
  "CLICOLOR_FORCE",
  "COLUMNS",
  "LINES",
]);

/**
 * Variables whose value names a file when it holds a slash (a locale folder, a terminfo file):
 * only a plain name is harmless.
 */
const NAMED_DATA = /^(LANG|LANGUAGE|LC_[A-Z]+|TERM)$/;

/** Lower-case names the sandbox passes into the environment (see `shell_env.ts`). */
const EXPORTED_LOWER_CASE = /^(http_proxy|https_proxy|no_proxy|all_proxy|ftp_proxy)$/;

/**
 * Whether setting `name` to `value` in a program's environment is known not to change what it
 * loads or runs: only {@linkcode HARMLESS_VARIABLES} and `LC_*` (a locale or terminal name only when written
 * out without a slash or an expansion).
 */
export function isHarmlessVariable(name: string, value: string): boolean {
  if (!HARMLESS_VARIABLES.has(name) && !/^LC_[A-Z]+$/.test(name)) return false;
  return !NAMED_DATA.test(name) || !/[\/$`\\]/.test(value);
}

/** How `NAME=value` words reach programs. */
export interface AssignmentOptions {
  /**
   * Plain shell assignments (`x=1; …`, no command after them): a name with a lower-case letter
   * stays a shell variable, since the sandbox exports none but the proxy names; an upper-case
   * one may already be in the environment (`HOME=evil; git status`).
   */
  shellOnly?: boolean;
}

/**
 * The risk of `NAME=value` words (as written), or undefined when each is known to be harmless
 * ({@linkcode isHarmlessVariable}). Words that are not assignments are skipped; with
 * `names` (`export HOME`) a bare name counts as an assignment of it. Never throws.
 */
export function assignmentRisk(
  assignments: readonly string[],
  options: AssignmentOptions & { names?: boolean } = {},
): CommandRisk | undefined {
  for (const assignment of assignments) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=(.*)$/s.exec(assignment) ??
      (options.names ? /^([A-Za-z_][A-Za-z0-9_]*)()$/.exec(assignment) : null);
    if (!match) continue;
    const [, name, value] = match;
    if (isHarmlessVariable(name, value)) continue;
    if (options.shellOnly && /[a-z]/.test(name) && !EXPORTED_LOWER_CASE.test(name)) continue;
    return risk("runs-code", `"${name}" in the environment can change what programs load or run`);
  }
  return undefined;
}
