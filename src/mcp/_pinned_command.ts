/**
 * What a command runs, as far as trust can pin it: a project hook's shell command read as the
 * shell splits it (its simple commands, the folders each may start in, which words name code),
 * and an MCP server's command line (exact words). Trust pins (SHA-256) the workspace files that
 * run, so a command is read by a small grammar and anything outside it is `unfollowable`: such a
 * hook can never be trusted, since a changed file it runs could escape the pins.
 *
 * The grammar: plain words (letters, digits, `_./,:=+@%^-`, and quoted text without `$`, `` ` ``
 * or `\`); `&&`, `||`, `;`, `|`, `&`, line breaks and `( … )` subshells; output redirections to
 * a plain word, input only from `/dev/null`; `cd DIR` and `pushd DIR` to a folder inside the
 * workspace; a few harmless builtins (`echo`, `printf` without `-v`, `test`, `[`, `true`,
 * `false`, `:`, `exit`, `pwd`, `wait`, `popd`, `source` and `.` with a script); `exec`,
 * `command`, `nohup`, `time`, `!` before a command; an interpreter with options known not to load
 * other code, then its script (or module, for `python -m`), which must exist as named (`node
 * tools/hook` would run `tools/hook.js`); build tools with their own files (`make`'s Makefile or
 * `-f` file, `package.json`, a justfile) and the configuration they read from the folder they
 * start in and each one above (`deno.json`, `deno.jsonc` and `package.json` for Deno, `.npmrc`).
 * Refused: any `$` (variables, substitutions, `$'…'`), backslash escapes, `~`, patterns and
 * braces, here-documents and input files, variable assignments, every other shell builtin and
 * keyword (`set`, `declare`, `[[`, `eval`, function definitions, …), paths through `..` (a link
 * before it moves the folder), code given as text (`bash -c`, `make --eval`), programs that run
 * commands they read (`xargs`, `find -exec`), from another folder (`env -C`, `make -C`,
 * `git -c`/`-C`) or of another package (`npm -w`, `pnpm --filter`, `yarn workspace`).
 */
import { basename, dirname, join, relative, resolve } from "../core/path.ts";
import { realPathOrNull } from "../core/verified_open.ts";
import {
  CODE_OPTIONS,
  CONFIGS,
  CONVENTION_FILES,
  ELSEWHERE_OPTIONS,
  FOLDER_OPTIONS,
  HARMLESS_BUILTINS,
  INTERPRETERS,
  PROJECT_RUNNERS,
  RUNNERS,
  SAFE_OPTIONS,
  SHARED_WRITABLE,
  SHELL_WORDS,
  SHELLS,
  SHORT_C_PROGRAMS,
  WRAPPERS,
} from "./_command_words.ts";

/** One simple command: its words, a folder it may start in, the indexes of words naming code. */
export interface HookCommandPart {
  cwd: string;
  argv: string[];
  /** Indexes of `argv` that name code: their folders' files are pinned too. */
  scripts: Set<number>;
  /** Indexes of `scripts` whose folder is pinned one level only (a build tool's own file). */
  shallow: Set<number>;
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

class Unfollowable extends Error {}

/** A program's words read by `readSimple`, before the folder it starts in is known. */
interface SimpleReading {
  argv: string[];
  scripts: Set<number>;
  /** Indexes of scripts an interpreter runs: each must exist as named (see `placed`). */
  exact: Set<number>;
  /** Files the program reads from the folder it starts in and each one above, to the workspace. */
  configs: readonly string[];
  /** Indexes of `scripts` whose folder is pinned one level only (a build tool's own file). */
  shallow: Set<number>;
}

/**
 * `read` as it runs from `cwd`: each script an interpreter runs must exist as named there
 * (`node tools/hook` runs `tools/hook.js`, and bash looks on PATH for a script it cannot find),
 * and the files in `configs` are added from `cwd` and each folder above it up to the workspace,
 * both as written and where links lead (where the program finds them). Throws
 * {@linkcode Unfollowable} for a script that does not exist as named.
 */
function placed(read: SimpleReading, cwd: string, workspace: string): SimpleReading {
  for (const index of read.exact) {
    if (realPathOrNull(resolve(cwd, read.argv[index])) !== null) continue;
    const where = cwd === workspace ? "" : ` in "${relative(workspace, cwd)}"`;
    throw new Unfollowable(
      `its script "${read.argv[index]}" does not exist as named${where}, and \`${
        basename(read.argv[0])
      }\` may run another file in its place: name the file as it is, with its extension ` +
        "(`node tools/hook.js`), from the one folder the command starts in",
    );
  }
  if (read.configs.length === 0) return read;
  const argv = [...read.argv];
  const root = realPathOrNull(workspace) ?? workspace;
  const folders = new Set<string>();
  const climb = (from: string, top: string) => {
    for (let folder = from; folder === top || folder.startsWith(`${top}/`);) {
      folders.add(join(workspace, relative(top, folder)));
      if (folder === top) break;
      folder = dirname(folder);
    }
  };
  climb(cwd, workspace);
  climb(realPathOrNull(cwd) ?? cwd, root);
  for (const index of read.exact) climb(dirname(resolve(cwd, argv[index])), workspace);
  // Pinned as files (or as missing: one made later lapses trust), never with their folders.
  for (const folder of folders) argv.push(...read.configs.map((name) => join(folder, name)));
  return { ...read, argv };
}

/**
 * Reads `command` (with `$CLAUDE_PROJECT_DIR` and `$TERN_PROJECT_DIR` put in) for pinning: a
 * `cd DIR` (or `pushd DIR`) adds DIR for the commands after it, so `cd tools && ./pre.sh` names
 * `tools/pre.sh` alone, and `(cd sub && ./a.sh); ./b.sh` names both `sub/b.sh` and `./b.sh` (the
 * `cd` may have failed, ended with its subshell or been undone). Never throws.
 */
export function readHookCommand(command: string, workspace: string): HookCommandReading {
  // The project's folder, as the shell would put it in; a path the grammar cannot hold as a
  // plain word (a quote, `$`, a backslash) is not put in, so the command is refused.
  const expanded = /^[^'"$`\\]*$/.test(workspace)
    ? command.replace(
      /\$(?:\{(?:CLAUDE|TERN)_PROJECT_DIR\}|(?:CLAUDE|TERN)_PROJECT_DIR(?![A-Za-z0-9_]))/g,
      () => workspace,
    )
    : command;
  const parts: HookCommandPart[] = [];
  let folders = [workspace];
  let tooManyFolders = false;
  try {
    // Every folder a command may start in: a `cd` may fail, end with its subshell or be undone
    // (`popd`), so the folders before it stay possible too; only the command right after
    // `cd DIR &&` runs in DIR alone.
    let onlyNext: string[] | undefined;
    for (const { argv: words, op } of simpleCommands(expanded)) {
      const here = onlyNext ?? folders;
      onlyNext = undefined;
      const read = readSimple(words, true);
      if ("cd" in read) {
        const moved = here.map((folder) => resolve(folder, read.cd));
        if (moved.some((folder) => folder !== workspace && !folder.startsWith(`${workspace}/`))) {
          throw new Unfollowable(`\`cd ${read.cd}\` leads out of the workspace`);
        }
        folders = [...new Set([...folders, ...moved])];
        if (folders.length > MAX_FOLDERS) {
          tooManyFolders = true;
          folders = folders.slice(0, MAX_FOLDERS);
        }
        if (op === "&&") onlyNext = moved;
      } else if (read.argv.length > 0) {
        for (const cwd of here) {
          // Code outside the workspace, where every command may write, is never pinned.
          // Where it lies on disk counts too: a link in the workspace may lead there.
          for (const index of read.scripts) {
            const path = resolve(cwd, read.argv[index]);
            for (const where of [path, realPathOrNull(path) ?? path]) {
              if (SHARED_WRITABLE.test(where) && !where.startsWith(`${workspace}/`)) {
                throw new Unfollowable(`it runs "${where}", where any command may write`);
              }
            }
          }
          const { argv, scripts, shallow } = placed(read, cwd, workspace);
          parts.push({ cwd, argv, scripts, shallow });
        }
      }
    }
  } catch (error) {
    if (!(error instanceof Unfollowable)) throw error;
    return { parts, tooManyFolders, unfollowable: error.message };
  }
  return { parts, tooManyFolders };
}

/**
 * The command line `argv` (exact words, as an MCP server's `command` and `args`) read for
 * pinning: its words with the files the program reads added (`package.json` for `npm`, Deno's
 * configuration from `cwd` up to `workspace`), the indexes of those that name code, and why the
 * files it runs cannot be known (`bash -c '…'`, `node -e`, `env -C`, `xargs`), undefined when
 * they can. Exact words are not read as the shell would read them, and an interpreter's options
 * are not limited to those a hook may take. Given `cwd` and `workspace`, the script an
 * interpreter runs must exist as named (`node srv/server` runs `srv/server.js`). Never throws.
 */
export function readCommandLine(
  argv: readonly string[],
  where?: { cwd: string; workspace: string },
): { argv: string[]; scripts: Set<number>; problem?: string } {
  try {
    // Exact words are never a `cd`: only a hook's shell command is read for one.
    const read = readSimple([...argv], false);
    if ("cd" in read) return { argv: [...argv], scripts: new Set() };
    const done = where === undefined ? read : placed(read, where.cwd, where.workspace);
    return { argv: done.argv, scripts: done.scripts };
  } catch (error) {
    if (error instanceof Unfollowable) {
      return { argv: [...argv], scripts: new Set(), problem: error.message };
    }
    throw error;
  }
}

/**
 * The simple commands of `text` as the shell splits their words (quotes removed), each with the
 * operator after it; output redirections' targets left out (they are data). Throws
 * {@linkcode Unfollowable} at anything outside the grammar (see the module's comment).
 */
function simpleCommands(text: string): Array<{ argv: string[]; op: string }> {
  const commands: Array<{ argv: string[]; op: string }> = [];
  let argv: string[] = [];
  let word: string | undefined;
  let redirect: "out" | "in" | undefined;
  let groups = 0;
  // An unquoted `[` makes a word a pattern, unless the word is the test command `[` itself.
  let bracket = false;
  const endWord = () => {
    if (word === undefined) return;
    if (bracket && word !== "[" && word !== "[[") {
      throw new Unfollowable("it names files by a pattern (`[…]`)");
    }
    bracket = false;
    if (redirect === "in" && word !== "/dev/null") {
      throw new Unfollowable("it reads a file as input (`<`), which may be code it runs");
    }
    if (redirect === undefined) argv.push(word);
    redirect = undefined;
    word = undefined;
  };
  const endCommand = (op: string) => {
    endWord();
    if (redirect !== undefined) throw new Unfollowable("a redirection names no file");
    if (argv.length > 0) commands.push({ argv, op });
    argv = [];
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === " " || char === "\t") {
      endWord();
    } else if (char === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Unfollowable("a quote is not closed");
      word = (word ?? "") + text.slice(i + 1, end);
      i = end;
    } else if (char === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0) throw new Unfollowable("a quote is not closed");
      const quoted = text.slice(i + 1, end);
      if (/[$`\\]/.test(quoted)) {
        throw new Unfollowable(
          "it quotes `$`, `` ` `` or `\\` in double quotes, which the shell expands",
        );
      }
      word = (word ?? "") + quoted;
      i = end;
    } else if (char === "\\") {
      // Only a line continuation: any other escape is read otherwise by the shell than here.
      if (text[i + 1] !== "\n") throw new Unfollowable("it escapes a character with `\\`");
      i++;
    } else if (char === "$" || char === "`") {
      throw new Unfollowable("it expands `$…` or `` `…` ``, whose value tern cannot know");
    } else if (char === "~") {
      throw new Unfollowable("it names a folder with `~`, which the shell expands");
    } else if (char === "#" && word === undefined) {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end - 1;
    } else if (char === "<" || char === ">") {
      const next = text[i + 1] ?? "";
      if (next === "(") throw new Unfollowable("it runs a process substitution");
      if (char === "<" && /[<>&]/.test(next)) {
        throw new Unfollowable("it holds a here-document, here-string or descriptor input");
      }
      // `2>` and `&>`: the descriptor belongs to the redirection, not to the words.
      if (word !== undefined && /^[0-9]+$/.test(word)) word = undefined;
      endWord();
      if (char === ">") {
        while (/[>|]/.test(text[i + 1] ?? "")) i++;
        // `2>&1` names a descriptor, not a file.
        if (text[i + 1] === "&" && /[0-9-]/.test(text[i + 2] ?? "")) {
          i++;
          while (/[0-9-]/.test(text[i + 1] ?? "")) i++;
          continue;
        }
        if (text[i + 1] === "&") i++;
      }
      redirect = char === "<" ? "in" : "out";
    } else if (char === "&" && text[i + 1] === ">") {
      endWord();
    } else if (char === "&" || char === "|" || char === ";" || char === "\n") {
      const double = text[i + 1] === char && char !== "\n";
      endCommand(double ? char + char : char);
      if (double) i++;
    } else if (char === "(" || char === ")") {
      if (char === "(") {
        if (text[i + 1] === "(") throw new Unfollowable("it uses the shell's `((`");
        endWord();
        if (argv.length > 0 || word !== undefined) {
          throw new Unfollowable("it defines a shell function, which can stand for any command");
        }
      }
      groups += char === "(" ? 1 : -1;
      if (groups < 0) throw new Unfollowable("a `)` closes nothing");
      endCommand(char);
    } else if (/[A-Za-z0-9_./,:=+@%^!\]-]/.test(char) || char === "[") {
      if (char === "[") bracket = true;
      word = (word ?? "") + char;
    } else {
      throw new Unfollowable(
        `it holds ${
          JSON.stringify(char)
        } outside quotes, which tern does not read as the shell does`,
      );
    }
  }
  if (groups !== 0) throw new Unfollowable("a `(` is not closed");
  endCommand("");
  return commands;
}

/**
 * One simple command read: a `cd` and where to, or the program's words (wrappers such as
 * `command` taken off, a build tool's own files added) and which name code. With `shell`, the
 * words came from a hook's shell command and the grammar's stricter rules apply. Throws
 * {@linkcode Unfollowable} for a form whose files are not known.
 */
function readSimple(words: string[], shell: boolean): SimpleReading | { cd: string } {
  let argv = [...words];
  for (;;) {
    const first = argv[0];
    if (first === undefined) {
      return { argv: [], scripts: new Set(), exact: new Set(), configs: [], shallow: new Set() };
    }
    if (shell && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(first)) {
      throw new Unfollowable("it sets a variable, which can change what a program runs");
    }
    // `command -v jq` only asks where a program is.
    if (first === "command" && /^-[vV]$/.test(argv[1] ?? "")) {
      return { argv: [], scripts: new Set(), exact: new Set(), configs: [], shallow: new Set() };
    }
    if (WRAPPERS.has(first) || first === "env") {
      if (argv[1]?.startsWith("-") && argv[1] !== "--") {
        throw new Unfollowable(`\`${first} ${argv[1]}\` is a form tern does not follow`);
      }
      argv = argv.slice(argv[1] === "--" ? 2 : 1);
      if (first === "env" && shell && argv.some((w) => w.includes("="))) {
        throw new Unfollowable("it sets a variable, which can change what a program runs");
      }
      continue;
    }
    break;
  }
  const program = basename(argv[0]);
  if (shell) {
    if (argv.some((word) => /(?:^|\/)\.\.(?:\/|$)/.test(word))) {
      throw new Unfollowable("it names a path through `..`, where a link decides the folder");
    }
    if (SHELL_WORDS.has(argv[0])) {
      throw new Unfollowable(`it uses the shell's \`${argv[0]}\`, which tern does not follow`);
    }
    if (argv[0] === "cd" || argv[0] === "pushd") {
      const dir = argv[1];
      if (dir === undefined || argv.length > 2 || dir.startsWith("-") || dir === "") {
        throw new Unfollowable(`\`${argv.join(" ")}\` is a form of \`cd\` tern does not follow`);
      }
      return { cd: dir };
    }
    // Builtins that assign a variable (`printf -vPATH dir`, `wait -p PATH`) or read a word as a
    // variable's name, whose array subscript the shell evaluates (`test -v 'a[$(cmd)]'`).
    if (
      (argv[0] === "printf" && argv.some((word) => word.startsWith("-v"))) ||
      ((argv[0] === "test" || argv[0] === "[") && argv.some((word) => /^-[vR]$/.test(word))) ||
      ((argv[0] === "wait" || argv[0] === "popd") && argv.length > 1)
    ) {
      throw new Unfollowable(`\`${argv[0]}\` with these options is a form tern does not follow`);
    }
    if (HARMLESS_BUILTINS.has(argv[0])) {
      return { argv, scripts: new Set([0]), exact: new Set(), configs: [], shallow: new Set() };
    }
    if (argv[0] === "source" || argv[0] === ".") {
      if (argv[1] === undefined) throw new Unfollowable(`\`${argv[0]}\` names no script`);
      // Without a `/`, bash looks for the file on PATH before the folder it is in.
      if (!argv[1].includes("/")) {
        throw new Unfollowable(
          `\`${argv[0]} ${argv[1]}\` looks for the file on PATH first; write \`${argv[0]} ./${
            argv[1]
          }\``,
        );
      }
      // A shell reads the file it sources and imports nothing: its folder, one level.
      return {
        argv,
        scripts: new Set([1]),
        exact: new Set([1]),
        configs: [],
        shallow: new Set([1]),
      };
    }
  }
  if (RUNNERS.has(program)) {
    throw new Unfollowable(`\`${program}\` runs commands tern cannot see`);
  }
  const subcommand = argv.slice(1).find((word) => !/^[-+]/.test(word));
  if (subcommand !== undefined && PROJECT_RUNNERS[program]?.test(subcommand)) {
    throw new Unfollowable(
      `\`${program} ${subcommand}\` builds and runs the project's code, more than trust can ` +
        "pin; run it from your own hooks (~/.tern/settings.json) instead",
    );
  }
  if (program === "find" && argv.some((w) => /^-(?:exec|execdir|ok|okdir)$/.test(w))) {
    throw new Unfollowable("`find -exec` runs commands tern cannot see");
  }
  if (program === "git" && argv.some((w) => /^(?:-c|-C|--config-env|--exec-path)/.test(w))) {
    throw new Unfollowable("`git -c` and `git -C` can run programs tern cannot see");
  }
  const tool = program === "gmake" ? "make" : program === "npx" ? "npm" : program;
  const elsewhere = tool === "deno" && argv[1] !== "task" ? undefined : ELSEWHERE_OPTIONS[tool];
  for (const [index, word] of argv.entries()) {
    if (FOLDER_OPTIONS.test(word) || (word.startsWith("-C") && SHORT_C_PROGRAMS.has(program))) {
      throw new Unfollowable(`\`${program} ${word}\` runs from another folder`);
    }
    if (elsewhere?.test(word)) {
      throw new Unfollowable(
        `\`${program} ${word}\` runs the commands of another package or file, which trust ` +
          "does not pin; run the script itself (`cd pkgs/tools && npm run check`)",
      );
    }
    if ((tool === "make" || tool === "npm") && CODE_OPTIONS[tool].test(word)) {
      throw new Unfollowable(`\`${program} ${word}\` is given code as text, which tern cannot pin`);
    }
    // An interpreter anywhere (`timeout 5 bash -c …`, `sudo python3 -c …`) given code as text.
    const kind = interpreterKind(basename(word));
    if (kind !== "" && codeOption(kind, argv.slice(index + 1))) {
      throw new Unfollowable(
        `\`${basename(word)}\` is given its code as text, which tern cannot pin`,
      );
    }
  }
  const scripts = new Set<number>([0]);
  const exact = new Set<number>();
  const shallow = new Set<number>();
  const kind = interpreterKind(program);
  const extra: string[] = [];
  const modules: string[] = [];
  const configs = CONFIGS[kind === "deno" ? "deno" : tool] ?? [];
  if (kind === "deno" && argv[1] === "task") {
    // `deno task` runs a task of deno.json, or a script of package.json (in `configs`).
  } else if (kind !== "") {
    // The interpreter's script: after its options (and `run` for deno), or `-m`'s module.
    const sub = kind === "deno" ? /^(?:run|test|bench|serve)$/ : kind === "bun" ? /^run$/ : /^$/;
    let at = sub.test(argv[1] ?? "") ? 2 : 1;
    for (; at < argv.length && argv[at].startsWith("-") && argv[at] !== "-"; at++) {
      const option = argv[at];
      if (kind === "python" && /^-m/.test(option)) {
        const module = (option === "-m" ? argv[at + 1] : option.slice(2))?.replaceAll(".", "/");
        if (!module) throw new Unfollowable("`-m` names no module");
        modules.push(`${module}.py`, module);
        break;
      }
      if (shell && !(SAFE_OPTIONS[kind]?.test(option) ?? false)) {
        throw new Unfollowable(
          `\`${program} ${option}\` is an option tern does not know to load no other code`,
        );
      }
    }
    if (kind === "deno" && /^(?:fmt|check|doc|info|types)$/.test(argv[1] ?? "")) {
      // They read the code and its configuration, and run none of it.
    } else if (kind === "bun" && /^[A-Za-z0-9_:-]+$/.test(argv[at] ?? "")) {
      // `bun run lint`, `bun lint`: a script of package.json (added below), not a file.
    } else if (modules.length === 0) {
      const script = argv[at];
      if (script === undefined || script === "-" || /^\/(?:dev|proc)\//.test(script)) {
        throw new Unfollowable(`\`${program}\` reads its code from its input`);
      }
      scripts.add(at);
      exact.add(at);
      // A shell imports nothing by name (Python's `import helper` may find a package folder
      // `helper/`): a shell script's folder is pinned one level, any other's with its subfolders.
      if (kind === "shell") shallow.add(at);
    }
  }
  if (program === "make" || program === "gmake") {
    const file = argv.findIndex((w) => /^(?:-f|--file|--makefile)(?:=|$)|^-f./.test(w));
    if (file > 0) {
      const option = argv[file];
      const value = /^--?[a-z]+=/.test(option)
        ? option.slice(option.indexOf("=") + 1)
        : option.length > 2 && option.startsWith("-f")
        ? option.slice(2)
        : argv[file + 1];
      if (!value) throw new Unfollowable("`make -f` names no file");
      extra.push(value);
    } else extra.push(...CONVENTION_FILES[program]);
  } else extra.push(...CONVENTION_FILES[program] ?? []);
  for (const file of [...modules, ...extra]) {
    // A build tool's file: the files beside it are pinned, not the whole tree below it.
    if (!modules.includes(file)) shallow.add(argv.length);
    scripts.add(argv.length);
    argv.push(file.startsWith("/") ? file : `./${file}`);
  }
  return { argv, scripts, exact, configs, shallow };
}

function interpreterKind(name: string): string {
  if (SHELLS.has(name)) return "shell";
  if (!INTERPRETERS.test(name)) return "";
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
