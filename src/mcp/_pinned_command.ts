/**
 * What a project hook's command runs, as far as trust can pin it: its simple commands, each with
 * its words as the shell splits them, every folder it may start in, and which words name code
 * (a script, an interpreter's script or module, a build tool's own file). A command written in a
 * form this reading cannot follow (a shell keyword, `bash -c '…'`, a variable, a pattern, `env
 * -C`, `xargs`) is `unfollowable`: the files it runs are not known, so trust could pin the wrong
 * ones and a changed script would still run. Such a hook can never be trusted; the reason says
 * how to write it instead.
 */
import { basename, resolve } from "../core/path.ts";

/** One simple command: its words, a folder it may start in, the indexes of words naming code. */
export interface HookCommandPart {
  cwd: string;
  argv: string[];
  /** Indexes of `argv` that name code: their folders' files are pinned too. */
  scripts: Set<number>;
}

/** A hook command read for pinning (see the module's comment). */
export interface HookCommandReading {
  parts: HookCommandPart[];
  /** The folders the `cd` commands may lead to passed {@linkcode MAX_FOLDERS}. */
  tooManyFolders: boolean;
  /** Why the files it runs cannot be known; undefined when they can. */
  unfollowable?: string;
}

/** The most folders a hook's commands are followed into. */
export const MAX_FOLDERS = 16;

/** How to write a hook that trust can pin. */
export const PINNABLE_FORM =
  "write it as `cd DIR && ./script` or `bash path/to/script.sh`, or move it into a script";

const KEYWORDS = new Set([
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "for",
  "while",
  "until",
  "do",
  "done",
  "case",
  "esac",
  "function",
  "select",
  "coproc",
  "((",
  "eval",
  "alias",
]);
/** Programs that run commands they read from their input or arguments as text. */
const RUNNERS = new Set(["xargs", "parallel", "watch", "su", "runuser", "script", "trap"]);
/** Programs that run the command their other words make up. */
const COMMAND_TAKERS = new Set([
  "timeout",
  "nice",
  "sudo",
  "doas",
  "stdbuf",
  "setsid",
  "ionice",
  "taskset",
  "chrt",
  "flock",
  "unbuffer",
  "strace",
  "ltrace",
]);
/** Words before a command that run it unchanged (no options taken here). */
const WRAPPERS = new Set(["builtin", "command", "exec", "nohup", "time", "!"]);
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox"]);
const INTERPRETERS =
  /^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|lua[0-9.]*|tsx|ts-node|Rscript)$/;
/** Options that hand an interpreter its code as text. */
const CODE_OPTIONS: Record<string, RegExp> = {
  shell: /^-[^-]*[cs]/,
  python: /^-[^-]*c/,
  node: /^(?:-[^-]*[ep]|--eval|--print)/,
  deno: /^(?:eval|-e|--eval)$/,
  bun: /^(?:-[^-]*e|--eval|--print|-p)/,
  ruby: /^-[^-]*e/i,
  perl: /^-[^-]*e/i,
  php: /^-[^-]*r/,
  lua: /^-[^-]*e/,
};
/** Options that move a program to another folder, where other files would run. */
const FOLDER_OPTIONS =
  /^--(?:chdir|directory|cwd|prefix|dir|working-directory|manifest-path)(?:=|$)/;
const SHORT_C_PROGRAMS = new Set(["env", "make", "gmake", "git", "npm", "pnpm", "yarn", "just"]);
/** The files a build tool reads its commands from, in the folder it starts in. */
const CONVENTION_FILES: Record<string, string[]> = {
  make: ["Makefile", "makefile", "GNUmakefile"],
  gmake: ["Makefile", "makefile", "GNUmakefile"],
  npm: ["package.json"],
  pnpm: ["package.json"],
  yarn: ["package.json"],
  bun: ["package.json"],
  just: ["justfile", "Justfile", ".justfile"],
};

class Unfollowable extends Error {}

/**
 * Reads `command` (with `$CLAUDE_PROJECT_DIR` and `$TERN_PROJECT_DIR` put in) for pinning: a
 * `cd DIR` (or `pushd DIR`) adds DIR for the commands after it, so `cd tools && ./pre.sh` names
 * `tools/pre.sh` alone, and `(cd sub && ./a.sh); ./b.sh` names both `sub/b.sh` and `./b.sh` (the
 * `cd` may have failed, ended with its subshell or been undone). Never throws.
 */
export function readHookCommand(command: string, workspace: string): HookCommandReading {
  const expanded = command.replace(/\$\{?(?:CLAUDE|TERN)_PROJECT_DIR\}?/g, workspace);
  let commands: Array<{ argv: string[]; op: string }>;
  try {
    commands = simpleCommands(expanded);
  } catch (error) {
    return { parts: [], tooManyFolders: false, unfollowable: (error as Error).message };
  }
  const parts: HookCommandPart[] = [];
  // Every folder a command may start in: a `cd` may fail, end with its subshell or be undone
  // (`popd`), so the folders before it stay possible too; only the command right after
  // `cd DIR &&` runs in DIR alone.
  let folders = [workspace];
  let tooManyFolders = false;
  let onlyNext: string[] | undefined;
  for (const { argv: words, op } of commands) {
    const here = onlyNext ?? folders;
    onlyNext = undefined;
    let read: { argv: string[]; scripts: Set<number> } | { cd: string | undefined };
    try {
      read = readSimple(words);
    } catch (error) {
      return { parts, tooManyFolders, unfollowable: (error as Error).message };
    }
    if ("cd" in read) {
      const dir = read.cd;
      const moved = dir === undefined || dir === "-" || dir.startsWith("~")
        ? [workspace]
        : here.map((folder) => resolve(folder, dir));
      folders = [...new Set([...folders, ...moved])];
      if (folders.length > MAX_FOLDERS) {
        tooManyFolders = true;
        folders = folders.slice(0, MAX_FOLDERS);
      }
      if (op === "&&") onlyNext = moved;
    } else if (read.argv.length > 0) {
      for (const cwd of here) parts.push({ cwd, argv: read.argv, scripts: read.scripts });
    }
  }
  return { parts, tooManyFolders };
}

/**
 * Why the files the command line `argv` (exact words, as an MCP server's `command` and `args`)
 * runs cannot be known (`bash -c '…'`, `node -e`, `env -C`, `xargs`); undefined when they can.
 */
export function commandLineProblem(argv: readonly string[]): string | undefined {
  try {
    const read = readSimple(argv.map((word) => word.replaceAll(UNKNOWN, "")));
    return "cd" in read ? "it is a `cd`, which runs nothing" : undefined;
  } catch (error) {
    if (error instanceof Unfollowable) return error.message;
    throw error;
  }
}

/** Stands for a part of a word whose value is not known (a variable, a command's output). */
const UNKNOWN = "\0";

/**
 * The simple commands of `text` as the shell splits their words (quotes removed), each with the
 * operator after it; redirections' targets left out (they are data). The commands inside a
 * command or process substitution are read as well, and the word it stands in, like one holding
 * a variable, holds {@linkcode UNKNOWN}. Throws {@linkcode Unfollowable} at a form whose
 * commands are not written out (an unquoted pattern, a here-document, a quote not closed).
 */
function simpleCommands(text: string): Array<{ argv: string[]; op: string }> {
  const commands: Array<{ argv: string[]; op: string }> = [];
  const end = readCommands(text, 0, undefined, commands, 0);
  if (end < text.length) throw new Unfollowable("a `)` closes nothing");
  return commands;
}

/**
 * Reads commands from `text` at `start` into `commands` until `closer` (the end of a
 * substitution) or the end; returns the index of the closer (or the length).
 */
function readCommands(
  text: string,
  start: number,
  closer: ")" | "`" | undefined,
  commands: Array<{ argv: string[]; op: string }>,
  depth: number,
): number {
  if (depth > 16) throw new Unfollowable("its substitutions nest too deep");
  let argv: string[] = [];
  let word: string | undefined;
  let redirectTarget = false;
  let groups = 0;
  // An unquoted `[` or `{` inside a word: a pattern or a brace expansion, unless the word is
  // the test command itself (`[`, `[[`) or a group's brace (a keyword, refused later).
  let bracket = false;
  const endWord = () => {
    if (word === undefined) return;
    if (bracket && !["[", "[[", "{"].includes(word)) {
      throw new Unfollowable("it names files by a pattern (`*`, `?`, `[…]`, `{…}`)");
    }
    bracket = false;
    if (redirectTarget) redirectTarget = false;
    else argv.push(word);
    word = undefined;
  };
  const endCommand = (op: string) => {
    endWord();
    if (redirectTarget) throw new Unfollowable("a redirection names no file");
    if (argv.length > 0) commands.push({ argv, op });
    argv = [];
  };
  // `$…` at `at`: a substitution's commands are read; returns where the expansion ends.
  const dollar = (at: number): number => {
    const next = text[at + 1] ?? "";
    if (next === "(") {
      if (text[at + 2] === "(") throw new Unfollowable("it uses the shell's `$((`");
      const close = readCommands(text, at + 2, ")", commands, depth + 1);
      word = (word ?? "") + UNKNOWN;
      return close;
    }
    const name = text.slice(at + 1).match(/^(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/);
    if (name === null) {
      word = (word ?? "") + "$";
      return at;
    }
    word = (word ?? "") + UNKNOWN;
    return at + name[0].length;
  };
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (char === closer && (closer === "`" || groups === 0)) {
      endCommand("");
      return i;
    }
    if (char === " " || char === "\t") {
      endWord();
    } else if (char === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Unfollowable("a quote is not closed");
      word = (word ?? "") + text.slice(i + 1, end);
      i = end;
    } else if (char === '"') {
      word ??= "";
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && j + 1 < text.length && '$`"\\\n'.includes(text[j + 1])) {
          word += text[++j];
        } else if (text[j] === "`") {
          j = readCommands(text, j + 1, "`", commands, depth + 1);
          word += UNKNOWN;
        } else if (text[j] === "$") {
          j = dollar(j);
        } else word += text[j];
      }
      if (j >= text.length) throw new Unfollowable("a quote is not closed");
      i = j;
    } else if (char === "\\") {
      if (text[i + 1] === "\n") i++;
      else if (i + 1 < text.length) word = (word ?? "") + text[++i];
    } else if (char === "`") {
      i = readCommands(text, i + 1, "`", commands, depth + 1);
      if (i >= text.length) throw new Unfollowable("a `` ` `` is not closed");
      word = (word ?? "") + UNKNOWN;
    } else if (char === "$") {
      i = dollar(i);
      if (i >= text.length) throw new Unfollowable("a `$(` is not closed");
    } else if (char === "#" && word === undefined) {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end - 1;
    } else if (char === "<" || char === ">") {
      if (char === "<" && text[i + 1] === "<") {
        throw new Unfollowable("it holds a here-document or here-string");
      }
      // `2>` and `&>`: the descriptor belongs to the redirection, not to the words.
      if (word !== undefined && /^[0-9]+$/.test(word)) word = undefined;
      endWord();
      if (text[i + 1] === "(") {
        // A process substitution: its commands run; it stands as a word (a file name).
        i = readCommands(text, i + 2, ")", commands, depth + 1);
        if (i >= text.length) throw new Unfollowable("a `(` is not closed");
        argv.push(UNKNOWN);
        continue;
      }
      while (/[<>&|]/.test(text[i + 1] ?? "")) i++;
      // `2>&1` names a descriptor, not a file.
      const duplicate = text[i] === "&" && /[0-9-]/.test(text[i + 1] ?? "");
      if (duplicate) {
        while (/[0-9-]/.test(text[i + 1] ?? "")) i++;
      } else redirectTarget = true;
    } else if (char === "&" && text[i + 1] === ">") {
      endWord();
    } else if (char === "&" || char === "|" || char === ";" || char === "\n") {
      const double = text[i + 1] === char && char !== "\n";
      endCommand(double ? char + char : char);
      if (double) i++;
    } else if (char === "(" || char === ")") {
      if (char === "(" && text[i + 1] === "(") throw new Unfollowable("it uses the shell's `((`");
      groups += char === "(" ? 1 : -1;
      if (groups < 0) throw new Unfollowable("a `)` closes nothing");
      endCommand(char);
    } else {
      if (char === "*" || char === "?") {
        throw new Unfollowable("it names files by a pattern (`*`, `?`, `[…]`, `{…}`)");
      }
      if (char === "[" || char === "{") bracket = true;
      word = (word ?? "") + char;
    }
  }
  if (closer !== undefined) {
    throw new Unfollowable(`a \`${closer === ")" ? "$(" : "`"}\` is not closed`);
  }
  endCommand("");
  return text.length;
}

/**
 * One simple command read: a `cd` and where to, or the program's words (assignments and
 * wrappers such as `command` taken off, a build tool's own files added) and which name code.
 * Throws {@linkcode Unfollowable} for a form whose files are not known.
 */
function readSimple(
  words: string[],
): { argv: string[]; scripts: Set<number> } | { cd: string | undefined } {
  let argv = [...words];
  for (;;) {
    while (argv.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[0])) argv = argv.slice(1);
    const first = argv[0];
    if (first === undefined) return { argv: [], scripts: new Set() };
    // `command -v jq` only asks where a program is.
    if (first === "command" && /^-[vV]$/.test(argv[1] ?? "")) {
      return { argv: [], scripts: new Set() };
    }
    if (WRAPPERS.has(first) || first === "env") {
      if (argv[1]?.startsWith("-") && argv[1] !== "--") {
        throw new Unfollowable(`\`${first} ${argv[1]}\` is a form tern does not follow`);
      }
      argv = argv.slice(argv[1] === "--" ? 2 : 1);
      continue;
    }
    break;
  }
  if (argv[0].includes(UNKNOWN)) {
    throw new Unfollowable("the program it runs comes from a variable or a command's output");
  }
  const program = basename(argv[0]);
  if (KEYWORDS.has(program)) {
    throw new Unfollowable(`it uses the shell's \`${program}\`, which tern does not follow`);
  }
  if (program === "cd" || program === "pushd") {
    if (argv[1]?.includes(UNKNOWN)) {
      throw new Unfollowable("it changes to a folder named by a variable or a command's output");
    }
    return { cd: argv[1] };
  }
  if (COMMAND_TAKERS.has(program) && argv.some((word) => word.includes(UNKNOWN))) {
    throw new Unfollowable(`what \`${program}\` runs comes from a variable or a command's output`);
  }
  if (RUNNERS.has(program)) {
    throw new Unfollowable(`\`${program}\` runs commands tern cannot see`);
  }
  if (program === "find" && argv.some((w) => /^-(?:exec|execdir|ok|okdir)$/.test(w))) {
    throw new Unfollowable("`find -exec` runs commands tern cannot see");
  }
  for (const [index, word] of argv.entries()) {
    if (FOLDER_OPTIONS.test(word) || (word.startsWith("-C") && SHORT_C_PROGRAMS.has(program))) {
      throw new Unfollowable(`\`${program} ${word}\` runs from another folder`);
    }
    // An interpreter anywhere (`timeout 5 bash -c …`, `sudo python3 -c …`) given code as text.
    const name = basename(word);
    const kind = SHELLS.has(name) ? "shell" : INTERPRETERS.test(name) ? interpreterKind(name) : "";
    if (kind === "") continue;
    if (codeOption(kind, argv.slice(index + 1))) {
      throw new Unfollowable(`\`${name}\` is given its code as text, which tern cannot pin`);
    }
    if (index === 0 && kind === "shell" && !argv.some((w, i) => i > 0 && !w.startsWith("-"))) {
      throw new Unfollowable(`\`${name}\` reads its commands from its input`);
    }
  }
  const scripts = new Set<number>([0]);
  const kind = SHELLS.has(program)
    ? "shell"
    : INTERPRETERS.test(program)
    ? interpreterKind(program)
    : "";
  const extra: string[] = [];
  if (kind !== "") {
    // The interpreter's script: its first word that is not an option (after `run` for deno,
    // the module `-m` names for python).
    let start = 1;
    if (kind === "deno") {
      if (argv[1] === "task") extra.push("deno.json", "deno.jsonc");
      else start = argv.findIndex((w, i) => i > 0 && !w.startsWith("-")) + 1;
    }
    const moduleAt = kind === "python" ? argv.indexOf("-m") : -1;
    if (moduleAt > 0 && argv[moduleAt + 1] !== undefined) {
      const module = argv[moduleAt + 1].replaceAll(".", "/");
      extra.push(`${module}.py`, module);
    } else if (!(kind === "deno" && argv[1] === "task")) {
      const at = argv.findIndex((w, i) => i >= start && !w.startsWith("-"));
      if (at > 0) scripts.add(at);
    }
  }
  for (const index of scripts) {
    if (argv[index].includes(UNKNOWN)) {
      throw new Unfollowable("the script it runs comes from a variable or a command's output");
    }
  }
  extra.push(...CONVENTION_FILES[program] ?? []);
  for (const file of extra) {
    scripts.add(argv.length);
    argv.push(`./${file}`);
  }
  return { argv, scripts };
}

function interpreterKind(name: string): string {
  return name.startsWith("python") || name.startsWith("pypy")
    ? "python"
    : name === "nodejs" || name === "tsx" || name === "ts-node"
    ? "node"
    : name.replace(/[0-9.]+$/, "");
}

function codeOption(kind: string, rest: readonly string[]): boolean {
  const pattern = CODE_OPTIONS[kind];
  if (pattern === undefined) return false;
  // Options come before the script; what follows the script is the script's own.
  for (const word of rest) {
    if (kind === "deno" && pattern.test(word)) return true;
    if (!word.startsWith("-")) return false;
    if (pattern.test(word)) return true;
  }
  return false;
}
