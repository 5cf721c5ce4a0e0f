/**
 * argv to option values and positionals, as node:util's `parseArgs` does it in strict mode with
 * positionals allowed: `--name value`, `--name=value`, `-n value`, `-nvalue`, short booleans
 * grouped (`-ch`), `--` ending the options, the last of a repeated option winning, and the same
 * error messages. Written out because importing any `node:` module starts Deno's Node
 * compatibility layer, which costs every start 15 ms or more before tern's first request.
 */

/** One option: its type and an optional one-letter alias. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
}

/** The values `options` can produce; absent when not given. */
export type ArgvValues<O extends Record<string, OptionSpec>> = {
  [K in keyof O]?: O[K]["type"] extends "string" ? string : boolean;
};

/**
 * Splits `args` by `options`.
 * @throws {TypeError} for an unknown option, a string option without a value or with one that
 * looks like an option (`--model -x`), or a boolean option given a value (`--json=yes`).
 */
export function parseArgv<O extends Record<string, OptionSpec>>(
  args: readonly string[],
  options: O,
): { values: ArgvValues<O>; positionals: string[] } {
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const remaining = [...args];
  const typeOf = (name: string) => Object.hasOwn(options, name) ? options[name].type : undefined;
  const longFor = (letter: string) =>
    Object.keys(options).find((name) => options[name].short === letter) ?? letter;
  const store = (name: string, rawName: string, value: string | undefined, inline: boolean) => {
    if (!Object.hasOwn(options, name)) throw new TypeError(`Unknown option "${rawName}"`);
    const short = options[name].short;
    const shortAndLong = `${short ? `-${short}, ` : ""}--${name}`;
    if (options[name].type === "string") {
      if (value === undefined) {
        throw new TypeError(`Option '${shortAndLong} <value>' argument missing`);
      }
      if (!inline && value.length > 1 && value.startsWith("-")) {
        const example = rawName.startsWith("--")
          ? `'${rawName}=-XYZ'`
          : `'--${name}=-XYZ' or '${rawName}-XYZ'`;
        throw new TypeError(
          `Option '${rawName}' argument is ambiguous.\n` +
            `Did you forget to specify the option argument for '${rawName}'?\n` +
            `To specify an option argument starting with a dash use ${example}.`,
        );
      }
      values[name] = value;
    } else {
      if (value !== undefined) {
        throw new TypeError(`Option '${shortAndLong}' does not take an argument`);
      }
      values[name] = true;
    }
  };
  while (remaining.length > 0) {
    const arg = remaining.shift()!;
    if (arg === "--") {
      positionals.push(...remaining);
      break;
    }
    const short = arg.length >= 2 && arg[0] === "-" && arg[1] !== "-";
    if (short && arg.length === 2) {
      const name = longFor(arg[1]);
      const takes = typeOf(name) === "string" && remaining.length > 0;
      store(name, arg, takes ? remaining.shift() : undefined, false);
    } else if (short && typeOf(longFor(arg[1])) !== "string") {
      // `-abc` is `-a -b -c`; a string option inside takes the rest: `-abfFILE` is `-a -b -fFILE`.
      const expanded: string[] = [];
      for (let i = 1; i < arg.length; i++) {
        if (typeOf(longFor(arg[i])) !== "string" || i === arg.length - 1) {
          expanded.push(`-${arg[i]}`);
        } else {
          expanded.push(`-${arg.slice(i)}`);
          break;
        }
      }
      remaining.unshift(...expanded);
    } else if (short) {
      store(longFor(arg[1]), `-${arg[1]}`, arg.slice(2), true);
    } else if (arg.length > 2 && arg.startsWith("--")) {
      if (!arg.includes("=", 3)) {
        const name = arg.slice(2);
        const takes = typeOf(name) === "string" && remaining.length > 0;
        store(name, arg, takes ? remaining.shift() : undefined, false);
      } else {
        const name = arg.slice(2, arg.indexOf("="));
        store(name, `--${name}`, arg.slice(arg.indexOf("=") + 1), true);
      }
    } else {
      positionals.push(arg);
    }
  }
  return { values: values as ArgvValues<O>, positionals };
}
