/**
 * Reads a command's arguments the way getopt does, enough to spot dangerous options. getopt_long
 * and git's option parser also take a long option by any unambiguous prefix of its name
 * (`--out` is `--output`), so every lookup here goes through {@linkcode namesOption}.
 */

/** Which options take a value: short letters (`"eo"` for `-e X`, `-oX`) and long names. */
export interface OptionSpec {
  short?: string;
  long?: readonly string[];
  /** The first operand ends the options, as with git's own parser (`git config a b --list`). */
  operandEnds?: boolean;
}

/** One option as given: `-i`, `--output` (with `value` when it took one). */
export interface Option {
  name: string;
  value?: string;
}

/** Options and operands, in order; everything after `--` is an operand. */
export interface ParsedArgs {
  options: Option[];
  operands: string[];
}

/** Splits `args` into options and operands; a short cluster `-ni` is `-n` and `-i`. */
export function parseArgs(args: readonly string[], spec: OptionSpec = {}): ParsedArgs {
  const parsed: ParsedArgs = { options: [], operands: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      parsed.operands.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      if (equals >= 0) {
        parsed.options.push({ name: arg.slice(0, equals), value: arg.slice(equals + 1) });
      } else if (spec.long?.some((name) => namesOption(arg, name))) {
        parsed.options.push({ name: arg, value: args[++i] });
      } else {
        parsed.options.push({ name: arg });
      }
    } else if (arg.startsWith("-") && arg.length > 1) {
      i += shortCluster(arg, spec.short ?? "", args[i + 1], parsed.options);
    } else if (spec.operandEnds) {
      parsed.operands.push(...args.slice(i));
      break;
    } else {
      parsed.operands.push(arg);
    }
  }
  return parsed;
}

/** Adds each flag of a cluster; returns 1 when the next argument was taken as a value. */
function shortCluster(arg: string, withValue: string, next: string | undefined, out: Option[]) {
  for (let i = 1; i < arg.length; i++) {
    const name = `-${arg[i]}`;
    if (!withValue.includes(arg[i])) {
      out.push({ name });
    } else if (i < arg.length - 1) {
      out.push({ name, value: arg.slice(i + 1) });
      return 0;
    } else {
      out.push({ name, value: next });
      return 1;
    }
  }
  return 0;
}

/**
 * Whether the option written `given` (its name, without `=value`) may be the option `name`: the
 * same, or for a long option any prefix of it (`--out`, `--outp` for `--output`). A prefix the
 * program finds ambiguous makes it refuse to run, so counting it too only errs on the careful
 * side when looking for a dangerous option. Never use it to find an option that makes a command
 * safe (`sed --sandbox`): there only the exact name counts.
 */
export function namesOption(given: string, name: string): boolean {
  if (given === name) return true;
  return name.startsWith("--") && given.startsWith("--") && given.length > 2 &&
    name.startsWith(given);
}

/**
 * The first option that may be one of `names` ({@linkcode namesOption}: long names also match
 * `--name=value` and their prefixes), for finding dangerous options.
 */
export function findOption(parsed: ParsedArgs, ...names: string[]): Option | undefined {
  return parsed.options.find((option) => names.some((name) => namesOption(option.name, name)));
}
