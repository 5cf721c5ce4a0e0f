/** Commands that only read, and the options that make some of them do more. */
import { gitRisk } from "./_git.ts";
import { findOption, type OptionSpec, parseArgs } from "./_options.ts";
import { assignmentRisk, type CommandRisk, risk, type RiskLabel } from "./_risk.ts";
import { sedRisk } from "./_sed.ts";

/** How a read-only command may stop being one. */
export interface ReadOnlyEntry {
  /** No option makes it write or run anything, so arguments that expand are harmless. */
  anyArgs?: boolean;
  /** The risk some arguments add; undefined when these arguments only read. */
  check?: (args: readonly string[]) => CommandRisk | undefined;
}

const ANY: ReadOnlyEntry = { anyArgs: true };

/** An entry for `name` that is read-only unless one of `options` is given. */
function unless(
  name: string,
  options: readonly string[],
  [label, what]: [RiskLabel, string],
  spec: OptionSpec = {},
): ReadOnlyEntry {
  return {
    check: (args) => {
      const found = findOption(parseArgs(args, spec), ...options);
      return found ? risk(label, `"${name} ${found.name}" ${what}`) : undefined;
    },
  };
}

const FIND_PRIMARIES: Readonly<Record<string, [RiskLabel, string]>> = {
  "-exec": ["runs-code", "runs other commands"],
  "-execdir": ["runs-code", "runs other commands"],
  "-ok": ["runs-code", "runs other commands"],
  "-okdir": ["runs-code", "runs other commands"],
  "-delete": ["destructive", "deletes files"],
  "-fprint": ["writes-files", "writes a file"],
  "-fprint0": ["writes-files", "writes a file"],
  "-fprintf": ["writes-files", "writes a file"],
  "-fls": ["writes-files", "writes a file"],
};

function findRisk(args: readonly string[]): CommandRisk | undefined {
  for (const arg of args) {
    const found = FIND_PRIMARIES[arg];
    if (found) return risk(found[0], `"find ${arg}" ${found[1]}`);
  }
  return undefined;
}

function rgRisk(args: readonly string[]): CommandRisk | undefined {
  const parsed = parseArgs(args, { short: "efgtTmABCMjrEd" });
  const runner = findOption(parsed, "--pre", "--pre-glob", "--hostname-bin");
  if (runner) return risk("runs-code", `"rg ${runner.name}" runs a program for each file`);
  const zip = findOption(parsed, "-z", "--search-zip");
  return zip ? risk("runs-code", `"rg ${zip.name}" runs decompression programs`) : undefined;
}

/**
 * `less -o` writes a log file; a lesskey file or text (`-k`, `--lesskey-src`, ...) may set
 * `LESSOPEN` in its `#env` section, which runs a program on each file, even when less only
 * copies to a pipe.
 */
function lessRisk(args: readonly string[]): CommandRisk | undefined {
  const parsed = parseArgs(args, { short: "oOk" });
  const keys = findOption(parsed, "-k", "--lesskey-file", "--lesskey-src", "--lesskey-content");
  if (keys) {
    return risk("runs-code", `"less ${keys.name}" reads key bindings that can run programs`);
  }
  const log = findOption(parsed, "-o", "-O", "--log-file", "--LOG-FILE");
  return log ? risk("writes-files", `"less ${log.name}" writes a log file`) : undefined;
}

/** `uniq IN OUT` and `xxd IN OUT` write their second operand. */
function secondOperandWrites(name: string, spec: OptionSpec): ReadOnlyEntry {
  return {
    check: (args) => {
      const parsed = parseArgs(args, spec);
      if (name === "xxd" && findOption(parsed, "-r", "-revert")) {
        return risk("writes-files", `"xxd -r" writes binary output`);
      }
      return parsed.operands.length >= 2
        ? risk("writes-files", `"${name}" with two files writes the second`)
        : undefined;
    },
  };
}

/** `unset 'a[$(cmd)]'` runs `cmd`: bash evaluates the subscript of a variable name. */
function subscriptsRunCode(name: string): ReadOnlyEntry {
  return {
    check: (args) =>
      args.some((arg) => arg.includes("["))
        ? risk("runs-code", `"${name}" evaluates an array subscript, which can run code`)
        : undefined,
  };
}

/**
 * `read NAME` and `mapfile NAME` assign what they read to NAME: an array subscript there can
 * run code, and an upper-case name may be in the environment of what follows (`read PATH < f;
 * ls` runs the `ls` the file chose). `mapfile -C CODE` runs CODE as it reads.
 */
function readerRisk(
  name: string,
  how: { withValue: string; callback?: boolean; arrayOption?: boolean },
): ReadOnlyEntry {
  const subscripts = subscriptsRunCode(name);
  return {
    check: (args) => {
      const parsed = parseArgs(args, { short: how.withValue });
      if (how.callback && findOption(parsed, "-C")) {
        return risk("runs-code", `"${name} -C" runs its callback code`);
      }
      const arrays = how.arrayOption ? parsed.options.filter((option) => option.name === "-a") : [];
      const names = [...parsed.operands, ...arrays.map((option) => option.value ?? "")];
      return subscripts.check?.(args) ?? assignedNamesRisk(names);
    },
  };
}

/** Names a shell assigns a value it read (unknown here): upper-case ones may be exported. */
export function assignedNamesRisk(names: readonly string[]): CommandRisk | undefined {
  return assignmentRisk(names.map((name) => `${name}=$`), { shellOnly: true });
}

/**
 * `set -k` makes every `NAME=value` argument of later commands a variable in their environment
 * (`git status HOME=evil` then reads `evil/.gitconfig`), and `set -a` exports every assignment,
 * lower-case ones too: both undo what the variable rules assume. `set -H` (with the history
 * list on) rewrites each later line before it is parsed: `find . -dxlete !#:2:s/x/e/` runs
 * `find . -dxlete -delete`.
 */
function setRisk(args: readonly string[]): CommandRisk | undefined {
  // bash's own reading: `-o` in a cluster takes the next word (`set -ok` is `-o` and `-k`),
  // and the first word that is not an option ends the options.
  for (let i = 0; i < args.length && /^-[A-Za-z]|^\+/.test(args[i]); i++) {
    const arg = args[i];
    for (const letter of arg.slice(1)) {
      const name = letter === "o" ? args[++i] : undefined;
      const found = letter === "o" ? SET_NAMES[name ?? ""] : SET_NAMES[`-${letter}`];
      if (found === undefined || arg.startsWith("+")) continue;
      const what = letter === "o" ? `${arg[0]}o ${name}` : `-${letter}`;
      return risk("runs-code", `"set ${what}" ${found}`);
    }
  }
  return undefined;
}

const ENVIRONMENT = "puts later commands' variables in their environment";
const REWRITES = "rewrites later lines with history expansion";

/** `set` options, as letters and as `-o` names, that change how later commands are read. */
const SET_NAMES: Readonly<Record<string, string>> = {
  "-k": ENVIRONMENT,
  "-a": ENVIRONMENT,
  "-H": REWRITES,
  keyword: ENVIRONMENT,
  allexport: ENVIRONMENT,
  histexpand: REWRITES,
};

/** `shopt -so keyword` is `set -k` (see {@linkcode setRisk}). */
function shoptRisk(args: readonly string[]): CommandRisk | undefined {
  const parsed = parseArgs(args);
  if (!findOption(parsed, "-o") || findOption(parsed, "-u")) return undefined;
  const found = parsed.operands.find((name) =>
    Object.hasOwn(SET_NAMES, name) && !name.startsWith("-")
  );
  return found ? risk("runs-code", `"shopt -o ${found}" ${SET_NAMES[found]}`) : undefined;
}

/**
 * `unset 'a[$(cmd)]'` evaluates the subscript; `unset PATH` makes bash look commands up in the
 * current folder (`unset PATH; cat f` runs the workspace's `./cat`), and other variables change
 * what programs load as setting them does. `unset -f` removes functions only.
 */
function unsetRisk(args: readonly string[]): CommandRisk | undefined {
  const subscript = subscriptsRunCode("unset").check?.(args);
  if (subscript) return subscript;
  const parsed = parseArgs(args);
  if (findOption(parsed, "-f")) return undefined;
  return assignmentRisk(parsed.operands.map((name) => `${name}=`), { shellOnly: true });
}

/** `export HOME=x` and `export HOME` put a variable into the environment of what follows. */
function declarationRisk(args: readonly string[]): CommandRisk | undefined {
  return assignmentRisk(args, { names: true });
}

/** Read-only commands, by name. Commands not listed are never read-only. */
export const READ_ONLY_COMMANDS: Readonly<Record<string, ReadOnlyEntry>> = {
  ...Object.fromEntries(
    [
      ..."ls cat head tail wc pwd echo true false which type stat du df grep egrep fgrep cut tr",
      ..." diff cmp basename dirname realpath readlink whoami id uname printenv jq nl tac rev",
      ..." column fold fmt paste join comm expand unexpand od hexdump strings md5sum sha1sum",
      ..." sha256sum sha512sum b2sum cksum seq sleep cd pushd popd dirs groups nproc",
      ..." arch tty locale free uptime ps pgrep basenc base64 base32 numfmt getconf command",
      ..." builtin exec nice nohup timeout stdbuf setsid ionice xargs [[ : break",
      ..." continue return exit shift",
    ].join("").split(" ").map((name) => [name, ANY]),
  ),
  test: unless("test", ["-v"], ["runs-code", "evaluates array subscripts, which can run code"]),
  "[": unless("[", ["-v"], ["runs-code", "evaluates array subscripts, which can run code"]),
  printf: unless("printf", ["-v"], [
    "runs-code",
    "assigns a variable, and its subscript can run code",
  ]),
  env: unless("env", ["-S", "--split-string"], ["runs-code", "runs the commands in its argument"], {
    short: "uCS",
  }),
  time: unless("time", ["-o", "--output"], ["writes-files", "writes a file"], { short: "fo" }),
  file: unless("file", ["-C", "--compile"], ["writes-files", "writes a compiled magic file"], {
    short: "mef",
  }),
  less: { check: lessRisk },
  more: ANY,
  set: { check: setRisk },
  shopt: { check: shoptRisk },
  jobs: unless("jobs", ["-x"], ["runs-code", "runs the command in its arguments"]),
  tree: unless("tree", ["-o", "-R"], ["writes-files", "writes files"], { short: "LPIoHT" }),
  date: unless("date", ["-s", "--set"], ["privileged", "sets the system clock"], { short: "dfrs" }),
  sort: {
    check: (args) => {
      const parsed = parseArgs(args, { short: "koStT", long: ["--output", "--key"] });
      const output = findOption(parsed, "-o", "--output");
      if (output) return risk("writes-files", `"sort ${output.name}" writes a file`);
      const program = findOption(parsed, "--compress-program");
      return program ? risk("runs-code", `"sort ${program.name}" runs a program`) : undefined;
    },
  },
  uniq: secondOperandWrites("uniq", { short: "fsw" }),
  // Not `-C` (capitalize): an option listed as taking a value hides the word after it.
  xxd: secondOperandWrites("xxd", { short: "cglnos" }),
  find: { check: findRisk },
  rg: { check: rgRisk },
  sed: { check: sedRisk },
  git: { check: gitRisk },
  // Not `-d` (forget): `hash -dp /bin/rm ls` is `-d` and `-p /bin/rm`.
  hash: unless("hash", ["-p"], ["runs-code", "makes a command name run another program"], {
    short: "p",
  }),
  unset: { check: unsetRisk },
  read: readerRisk("read", { withValue: "adinNptu", arrayOption: true }),
  mapfile: readerRisk("mapfile", { withValue: "dnOsuCc", callback: true }),
  readarray: readerRisk("readarray", { withValue: "dnOsuCc", callback: true }),
  wait: unless(
    "wait",
    ["-p"],
    ["runs-code", "assigns a variable, and its subscript can run code"],
    {
      short: "p",
    },
  ),
  export: { check: declarationRisk },
  declare: { check: declarationRisk },
  typeset: { check: declarationRisk },
  local: { check: declarationRisk },
  readonly: { check: declarationRisk },
};
