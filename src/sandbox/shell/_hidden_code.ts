/** Commands that run code the parser cannot see as commands: `eval`, `bash -c`, `source`, ... */
import { namesOption } from "./_options.ts";
import { commandName } from "./_wrappers.ts";
import { GIT_VALUE_OPTIONS } from "./_git.ts";
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

/**
 * Why a command hides code, the code itself when it is literal (to analyze as well), and why
 * some of what it runs cannot be read from the text at all (`unseen`: `$cmd`, `eval "$x"`,
 * `git -c alias.p=push p`), so that no command rule can tell whether it applies.
 */
export interface HiddenCode {
  reasons: string[];
  code: string[];
  unseen: string[];
}

/** find's actions that run the words after them, up to `;` or `+`, as a command. */
const FIND_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** Finds code hidden in one (already peeled) command; `heredocs` are the bodies it reads. */
export function findHiddenCode(
  words: readonly WordValue[],
  heredocs: readonly string[],
): HiddenCode {
  const hidden: HiddenCode = { reasons: [], code: [], unseen: [] };
  if (words.length === 0) return hidden;
  if (words[0].dynamic || words[0].pattern) {
    const reason = words[0].dynamic ? "variable as command name" : "glob as command name";
    hidden.reasons.push(reason);
    hidden.unseen.push(reason);
    return hidden;
  }
  const name = commandName(words[0].value);
  const args = words.slice(1);
  if (name === "eval") {
    hidden.reasons.push("eval");
    addCode(hidden, "eval", args.map((w) => w.value).join(" "), args);
  } else if (name === "source" || name === ".") {
    hidden.reasons.push("source");
  } else if (name === "trap") {
    const action = args[0];
    if (action && !action.value.startsWith("-")) {
      hidden.reasons.push("trap");
      addCode(hidden, "trap", action.value, [action]);
    }
  } else if (name === "coproc") {
    // tree-sitter reads `coproc NAME { … }` as words, so what runs is not known reliably.
    hidden.reasons.push("coproc");
    hidden.unseen.push("coproc");
  } else if (name === "alias") {
    aliasCode(args, hidden);
  } else if (name === "find") {
    findCode(args, hidden);
  } else if (name === "git") {
    gitCode(args, hidden);
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
      if (code) addCode(hidden, "su -c", code.value, [code]);
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
    if (operand) addCode(hidden, `${name} -c`, operand.value, [operand]);
  } else if (!operand || stdin) {
    const reason = heredocs.length > 0
      ? `here-doc run by ${name}`
      : `${name} reads code from standard input`;
    hidden.reasons.push(reason);
    if (heredocs.length === 0) hidden.unseen.push(reason);
    hidden.code.push(...heredocs);
  }
}

/** Adds `code` to analyze, or marks it unseen when one of `from` is only known when it runs. */
function addCode(hidden: HiddenCode, what: string, code: string, from: readonly WordValue[]) {
  if (from.some((word) => word.dynamic)) {
    hidden.unseen.push(`${what} of code only known when it runs`);
  } else hidden.code.push(code);
}

/** Quotes `words` so that the shell reads them back as exactly these words. */
function quoteWords(words: readonly WordValue[]): string {
  return words.map((word) => `'${word.value.replaceAll("'", `'\\''`)}'`).join(" ");
}

/** `alias r=rm`: with `shopt -s expand_aliases`, a later line runs `rm` as `r`. */
function aliasCode(args: readonly WordValue[], hidden: HiddenCode): void {
  for (const arg of args) {
    const equals = arg.value.indexOf("=");
    if (equals < 0 && !arg.dynamic) continue;
    if (!hidden.reasons.includes("alias")) hidden.reasons.push("alias");
    addCode(hidden, "alias", arg.value.slice(equals + 1), [arg]);
  }
}

/** `find … -exec rm {} +`: the words after an action are a command of their own. */
function findCode(args: readonly WordValue[], hidden: HiddenCode): void {
  for (let i = 0; i < args.length; i++) {
    if (args[i].dynamic || args[i].pattern) {
      // `find . $x` or `find . -e*` may be an action the text does not show.
      hidden.unseen.push("find with an argument only known when it runs");
      return;
    }
    if (!FIND_ACTIONS.has(args[i].value)) continue;
    let end = i + 1;
    while (end < args.length && ![";", "+"].includes(args[end].value)) end++;
    const command = args.slice(i + 1, end);
    if (command.some((word) => word.pattern)) {
      hidden.unseen.push(`find ${args[i].value} of a command only known when it runs`);
    } else if (command.length > 0) {
      addCode(hidden, `find ${args[i].value}`, quoteWords(command), command);
    }
    i = end;
  }
}

/**
 * `git -c alias.p=push p`, `git -c core.pager=CMD log`: config given on the command line can
 * run any command; `git submodule foreach CMD` runs CMD as shell code in each submodule.
 */
function gitCode(args: readonly WordValue[], hidden: HiddenCode): void {
  let i = 0;
  for (; i < args.length && args[i].value.startsWith("-") && !args[i].dynamic; i++) {
    const name = args[i].value.split("=")[0];
    if (/^-c/.test(name) || ["--config-env", "--exec-path"].includes(name)) {
      hidden.unseen.push(
        `"git ${name.startsWith("-c") ? "-c" : name}" can make git run any command`,
      );
    }
    if (GIT_VALUE_OPTIONS.has(args[i].value)) i++;
  }
  if (args[i]?.value !== "submodule") return;
  let j = i + 1;
  while (j < args.length && ["--quiet", "-q"].includes(args[j].value)) j++;
  if (args[j]?.value !== "foreach") return;
  j++;
  while (j < args.length && ["--recursive", "--quiet", "-q"].includes(args[j].value)) j++;
  const command = args.slice(j);
  if (command.length === 0) return;
  hidden.reasons.push("git submodule foreach");
  // One argument is shell code; several are the words of a command.
  const code = command.length === 1 ? command[0].value : quoteWords(command);
  if (command.some((word) => word.pattern)) hidden.unseen.push("git submodule foreach");
  else addCode(hidden, "git submodule foreach", code, command);
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
