/** Commands that run code the parser cannot see as commands: `eval`, `bash -c`, `source`, ... */
import { namesOption } from "./_options.ts";
import { commandName } from "./_wrappers.ts";
import type { WordValue } from "./_words.ts";

/** Shells whose `-c` string, standard input or here-doc is more shell code. */
export const SHELLS: ReadonlySet<string> = new Set([
  "bash",
  "sh",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "fish",
]);

/** Why a command hides code, and the code itself when it is literal (to analyze as well). */
export interface HiddenCode {
  reasons: string[];
  code: string[];
}

/** Finds code hidden in one (already peeled) command; `heredocs` are the bodies it reads. */
export function findHiddenCode(
  words: readonly WordValue[],
  heredocs: readonly string[],
): HiddenCode {
  const hidden: HiddenCode = { reasons: [], code: [] };
  if (words.length === 0) return hidden;
  if (words[0].dynamic || words[0].pattern) {
    hidden.reasons.push(words[0].dynamic ? "variable as command name" : "glob as command name");
    return hidden;
  }
  const name = commandName(words[0].value);
  const args = words.slice(1);
  if (name === "eval") {
    hidden.reasons.push("eval");
    if (args.every((word) => !word.dynamic)) hidden.code.push(args.map((w) => w.value).join(" "));
  } else if (name === "source" || name === ".") {
    hidden.reasons.push("source");
  } else if (name === "trap") {
    const action = args[0];
    if (action && !action.value.startsWith("-")) {
      hidden.reasons.push("trap");
      if (!action.dynamic) hidden.code.push(action.value);
    }
  } else if (name === "su") {
    // `-c CODE`, `-lc CODE`, `--command CODE`, `--command=CODE`, or an abbreviation (`--comm`).
    const index = args.findIndex((word) =>
      /^-[a-zA-Z]*c$/.test(word.value) ||
      ["--command", "--session-command"].some((long) =>
        namesOption(word.value.split("=", 1)[0], long)
      )
    );
    if (index >= 0) {
      hidden.reasons.push("su -c");
      const option = args[index];
      const equals = option.value.indexOf("=");
      const code = option.value.startsWith("--") && equals >= 0
        ? { ...option, value: option.value.slice(equals + 1) }
        : args[index + 1];
      if (code && !code.dynamic) hidden.code.push(code.value);
    }
  } else if (SHELLS.has(name)) {
    shellCode(name, args, heredocs, hidden);
  }
  return hidden;
}

function shellCode(
  name: string,
  args: readonly WordValue[],
  heredocs: readonly string[],
  hidden: HiddenCode,
): void {
  const { commandString, stdin, operand } = shellOptions(args);
  if (commandString) {
    hidden.reasons.push(`${name} -c`);
    if (operand && !operand.dynamic) hidden.code.push(operand.value);
  } else if (!operand || stdin) {
    hidden.reasons.push(
      heredocs.length > 0 ? `here-doc run by ${name}` : `${name} reads code from standard input`,
    );
    hidden.code.push(...heredocs);
  }
}

interface ShellOptions {
  /** `-c`: the first operand is code. */
  commandString: boolean;
  /** `-s`: code comes from standard input even when operands follow. */
  stdin: boolean;
  /** The first operand: the `-c` string or the script. */
  operand?: WordValue;
}

function shellOptions(args: readonly WordValue[]): ShellOptions {
  const options: ShellOptions = { commandString: false, stdin: false };
  for (let i = 0; i < args.length; i++) {
    const { value, dynamic } = args[i];
    if (dynamic) return { ...options, operand: args[i] };
    if (value === "--" || value === "-") return { ...options, operand: args[i + 1] };
    if (value === "--rcfile" || value === "--init-file") {
      i++;
    } else if (/^[-+][A-Za-z]+$/.test(value)) {
      if (value.startsWith("-") && value.includes("c")) options.commandString = true;
      if (value.startsWith("-") && value.includes("s")) options.stdin = true;
      if (/[oO]$/.test(value)) i++;
    } else if (!value.startsWith("--")) {
      return { ...options, operand: args[i] };
    }
  }
  return options;
}
