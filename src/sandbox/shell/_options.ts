/** Reads a command's arguments the way getopt does, enough to spot dangerous options. */

/** Which options take a value: short letters (`"eo"` for `-e X`, `-oX`) and long names. */
export interface OptionSpec {
  short?: string;
  long?: readonly string[];
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
      } else if (spec.long?.includes(arg)) {
        parsed.options.push({ name: arg, value: args[++i] });
      } else {
        parsed.options.push({ name: arg });
      }
    } else if (arg.startsWith("-") && arg.length > 1) {
      i += shortCluster(arg, spec.short ?? "", args[i + 1], parsed.options);
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

/** The first option named one of `names` (long names also match `--name=value`). */
export function findOption(parsed: ParsedArgs, ...names: string[]): Option | undefined {
  return parsed.options.find((option) => names.includes(option.name));
}
