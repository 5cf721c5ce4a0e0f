/**
 * What the analysis of a command line says (parse.ts): its own module, so the shell parser
 * process's client (parser_process.ts) and parse.ts share it without importing each other.
 */
import type { Redirect } from "./_walk.ts";

/** One command the shell would run, after wrappers such as `env` and `timeout` are peeled. */
export interface SimpleCommand {
  /** Words after unquoting (`\rm` is `rm`); a word with an expansion keeps its source text. */
  argv: string[];
  /**
   * Per argv word: bash may turn it into other text or other words when it runs (`$x`, `$(cmd)`,
   * an unquoted glob or brace pattern), so options could hide in it (`find *` and a file `-delete`).
   */
  expands: boolean[];
  /** `NAME=value` prefixes as written, then those given to `env` or `sudo`. */
  assignments: string[];
  redirects: Redirect[];
  /** Wrappers peeled off, in order: `env FOO=1 timeout 5 rm x` has `["env", "timeout"]`. */
  wrappers: string[];
  /** A wrapper runs it in another folder (`env -C dir git status`). */
  chdir: boolean;
  /** Source text of the command with its redirections (here-doc bodies excluded). */
  text: string;
  /** Came from `$( )`, backticks, `<( )`, or code hidden in `eval`, `bash -c`, a here-doc. */
  inSubstitution: boolean;
}

/**
 * The simple commands of a shell command line, and the reasons it hides code (`opaque`):
 * "command substitution", "process substitution", "eval", "bash -c", "source", "trap",
 * "here-doc run by bash", "bash reads code from standard input", "variable as command name",
 * "function definition", "arithmetic on a variable", `"env -S"`. `unseen` says why some of the
 * code it runs cannot be read from the text (a command name in a variable, `eval "$x"`,
 * `git -c`, `coproc`, `env -S`, arithmetic on a variable, code nested too deeply), so no
 * command rule can tell whether it applies. Or why it cannot be parsed.
 */
export type ShellAnalysis =
  | { ok: true; commands: SimpleCommand[]; opaque: string[]; unseen: string[] }
  | { ok: false; error: string };

/** The analysis of a command whose parse took longer than `budgetMs`. */
export function overBudget(budgetMs: number): ShellAnalysis {
  return {
    ok: false,
    error: `Cannot parse shell command: it took the parser longer than ${budgetMs / 1000} s; ` +
      "split it into smaller commands",
  };
}
