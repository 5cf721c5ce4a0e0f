/**
 * Peels commands that run another command (`env A=1 timeout 5 rm x` runs `rm x`). Each wrapper's
 * options that take a value are listed in full (from the programs' own `--help`): one missed
 * would make its value look like the command (`xargs --process-slot-var ls rm x` runs `rm`).
 */
import { namesOption } from "./_options.ts";
import type { WordValue } from "./_words.ts";

interface WrapperSpec {
  /** Short options that take a value (`-s KILL` or `-sKILL`). */
  short?: string;
  /** Long options that take a value (`--signal KILL` or `--signal=KILL`). */
  long?: readonly string[];
  /** Operands before the command (`timeout 5 cmd`). */
  operands?: number;
  /** `NAME=value` words before the command are environment assignments. */
  assignments?: boolean;
  /** Options after which the rest is not a command to peel (`command -v ls`, `time -o f`). */
  stop?: readonly string[];
  /** Options that hide code in a string (`env -S "cmd args"`). */
  opaque?: readonly string[];
  /** Options that run the command in another folder (`env -C dir`). */
  chdir?: readonly string[];
}

const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: {
    // -a/--argv0 (newer coreutils) is listed too: where env lacks it, it refuses to run.
    short: "uCSa",
    long: ["--unset", "--chdir", "--split-string", "--argv0"],
    assignments: true,
    opaque: ["-S", "--split-string"],
    chdir: ["-C", "--chdir"],
  },
  timeout: { short: "sk", long: ["--signal", "--kill-after"], operands: 1 },
  nice: { short: "n", long: ["--adjustment"] },
  nohup: {},
  xargs: {
    short: "adEILnPs",
    long: [
      ...["--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars"],
      "--process-slot-var",
    ],
  },
  sudo: {
    short: "aucgpCDrRtTU",
    long: [
      ...["--user", "--group", "--prompt", "--close-from", "--chdir", "--role", "--type"],
      ...["--auth-type", "--login-class", "--chroot", "--host", "--command-timeout"],
      "--other-user",
    ],
    assignments: true,
  },
  doas: { short: "uC" },
  command: { stop: ["-v", "-V"] },
  builtin: {},
  exec: { short: "a" },
  stdbuf: { short: "ioe", long: ["--input", "--output", "--error"] },
  time: { short: "fo", long: ["--format", "--output"], stop: ["-o", "--output"] },
  setsid: {},
  ionice: { short: "cnpPu", long: ["--class", "--classdata", "--pid", "--pgid", "--uid"] },
};

/** Directories whose programs are the well-known ones: `/usr/bin/rm` is `rm`. */
const SYSTEM_BIN = /^\/(?:usr\/(?:local\/)?)?s?bin\//;

/** The command's name for matching: the word with a system bin directory removed. */
export function commandName(word: string): string {
  return word.replace(SYSTEM_BIN, "");
}

/** What peeling left: the real command, the wrappers in order, and what they added. */
export interface Peeled {
  words: WordValue[];
  wrappers: string[];
  assignments: string[];
  opaque: string[];
  /** A wrapper runs the command in another folder. */
  chdir: boolean;
}

/** Removes wrapper commands and their options until the real command is first. */
export function peelWrappers(words: readonly WordValue[]): Peeled {
  const peeled: Peeled = {
    words: [...words],
    wrappers: [],
    assignments: [],
    opaque: [],
    chdir: false,
  };
  while (peeled.words.length > 0 && !peeled.words[0].dynamic) {
    const name = commandName(peeled.words[0].value);
    const spec = WRAPPERS[name];
    if (!spec) break;
    const rest = skipOptions(peeled.words, spec);
    // `timeout {5,bash} ls` runs `bash ls`, `nice -n $x ls` with x='1 rm' runs `rm ls`: a word
    // before the command that bash may make other words moves where the command starts.
    const unsure = peeled.words.slice(1, rest.index).find((word) => word.dynamic || word.pattern);
    if (unsure) peeled.opaque.push(`${name} argument "${unsure.value}" only known when it runs`);
    for (const flag of rest.seen) {
      if (listed(flag, spec.opaque)) peeled.opaque.push(`${name} ${flag}`);
      if (listed(flag, spec.chdir)) peeled.chdir = true;
    }
    if (rest.index >= peeled.words.length || rest.seen.some((f) => listed(f, spec.stop))) break;
    peeled.assignments.push(...rest.assignments);
    peeled.wrappers.push(name);
    peeled.words = peeled.words.slice(rest.index);
  }
  return peeled;
}

interface Skipped {
  index: number;
  seen: string[];
  assignments: string[];
}

/** Where the wrapped command starts (past the end when there is none), and what came before. */
function skipOptions(words: readonly WordValue[], spec: WrapperSpec): Skipped {
  const skipped: Skipped = { index: 1, seen: [], assignments: [] };
  let operands = spec.operands ?? 0;
  // After `--` no word is an option, but operands and assignments still come first:
  // `timeout -- 5 rm x` runs `rm x`.
  let ended = false;
  while (skipped.index < words.length) {
    const word = words[skipped.index];
    const text = word.value;
    if (word.dynamic) break;
    if (!ended && text === "--") {
      ended = true;
      skipped.index++;
    } else if (!ended && text.startsWith("--") && text.length > 2) {
      const [option, value] = splitLong(text);
      skipped.seen.push(option);
      skipped.index += listed(option, spec.long) && value === undefined ? 2 : 1;
    } else if (!ended && text.startsWith("-") && text.length > 1) {
      skipped.index += shortOptions(text, spec.short ?? "", skipped.seen);
    } else if (spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(text)) {
      skipped.assignments.push(text);
      skipped.index++;
    } else if (operands > 0) {
      operands--;
      skipped.index++;
    } else {
      break;
    }
  }
  return skipped;
}

/** Whether `option` may be one of `names`, abbreviations included ({@linkcode namesOption}). */
function listed(option: string, names: readonly string[] | undefined): boolean {
  return names?.some((name) => namesOption(option, name)) ?? false;
}

function splitLong(text: string): [string, string | undefined] {
  const equals = text.indexOf("=");
  return equals < 0 ? [text, undefined] : [text.slice(0, equals), text.slice(equals + 1)];
}

/** Records each flag of a cluster like `-0r` or `-sKILL`; returns the words consumed. */
function shortOptions(text: string, withValue: string, seen: string[]): number {
  for (let i = 1; i < text.length; i++) {
    seen.push(`-${text[i]}`);
    if (withValue.includes(text[i])) return i === text.length - 1 ? 2 : 1;
  }
  return 1;
}
