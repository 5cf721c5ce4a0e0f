/**
 * The words `_pinned_command.ts` reads a command by: shell builtins and keywords, interpreters
 * and their options, build tools' options and files. Each table says what its entries do; the
 * reading itself is in `_pinned_command.ts`.
 */
/** Shell builtins a hook may use: none of them runs other code or changes how words are read. */
export const HARMLESS_BUILTINS = new Set([
  "echo",
  "printf",
  "test",
  "[",
  "true",
  "false",
  ":",
  "exit",
  "pwd",
  "wait",
  "popd",
]);
/** Every other bash builtin and keyword: each can run code or change what later words do. */
export const SHELL_WORDS = new Set([
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
  "[[",
  "]]",
  "alias",
  "bg",
  "bind",
  "break",
  "caller",
  "compgen",
  "complete",
  "compopt",
  "continue",
  "declare",
  "dirs",
  "disown",
  "enable",
  "eval",
  "export",
  "fc",
  "fg",
  "getopts",
  "hash",
  "help",
  "history",
  "jobs",
  "kill",
  "let",
  "local",
  "logout",
  "mapfile",
  "read",
  "readarray",
  "readonly",
  "return",
  "set",
  "shift",
  "shopt",
  "suspend",
  "times",
  "trap",
  "type",
  "typeset",
  "ulimit",
  "umask",
  "unalias",
  "unset",
]);
/** Programs that run commands they read from their input or arguments as text. */
export const RUNNERS = new Set(["xargs", "parallel", "watch", "su", "runuser", "script"]);
/** Words before a command that run it unchanged (no options taken). */
export const WRAPPERS = new Set(["builtin", "command", "exec", "nohup", "time", "!"]);
/** Shells: their script is the word after their options. */
export const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "fish",
  "ash",
  "busybox",
]);
/** Interpreters whose script (or module) is read after their options. */
export const INTERPRETERS =
  /^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|lua[0-9.]*|tsx|ts-node|Rscript)$/;
/** Options that hand an interpreter its code as text (read in exact command lines too). */
export const CODE_OPTIONS: Record<string, RegExp> = {
  shell: /^-[^-]*[cs]/,
  python: /^-[^-]*c/,
  node: /^(?:-[^-]*[ep]|--eval|--print)/,
  deno: /^(?:eval|repl|-e|--eval)$/,
  bun: /^(?:-[^-]*e|--eval|--print|-p)/,
  ruby: /^-[^-]*e/i,
  perl: /^-[^-]*e/i,
  php: /^-[^-]*r/,
  lua: /^-[^-]*e/,
  // Not interpreters, but given code as text all the same: `make --eval=…`, `npm exec -c …`.
  make: /^(?:-[^-]*E|--eval(?:=|$))/,
  npm: /^(?:-c|--call)(?:=|$)/,
};
/** The options each interpreter may take before its script in a hook: none loads other code. */
export const SAFE_OPTIONS: Record<string, RegExp> = {
  shell: /^-[euxvn]+$/,
  python: /^-(?:[uBEsSIOq]+|OO)$/,
  node: /^--(?:no-warnings|enable-source-maps|trace-warnings|max-old-space-size=\d+)$/,
  deno:
    /^(?:-A|-q|--quiet|--no-prompt|--no-check|--cached-only|--no-lock|--(?:allow|deny)-[a-z-]+(?:=\S*)?)$/,
};
/** Options that move a program to another folder, where other files would run. */
export const FOLDER_OPTIONS =
  /^--(?:chdir|directory|cwd|prefix|dir|working-directory|manifest-path)(?:=|$)/;
/**
 * Subcommands of programs that build the whole project and run its code (`cargo run`, a
 * `build.rs` or proc macro for `cargo check`, `go test`): no file list trust could pin covers it.
 */
export const PROJECT_RUNNERS: Record<string, RegExp> = {
  cargo: /^(?:run|r|test|t|bench|build|b|check|c|clippy|doc|d|install|rustc|fix|miri)$/,
  go: /^(?:run|test|generate)$/,
};
/** Programs whose `-C DIR` runs them from another folder. */
export const SHORT_C_PROGRAMS = new Set([
  "env",
  "make",
  "gmake",
  "git",
  "npm",
  "pnpm",
  "yarn",
  "just",
]);
/** Options that make a build tool run another package's or file's commands, which nothing pins. */
export const ELSEWHERE_OPTIONS: Record<string, RegExp> = {
  npm: /^(?:-w|--workspace|--workspaces|-ws|--include-workspace-root)(?:=|$)|^-w./,
  pnpm: /^(?:-F|--filter|--filter-prod|-r|--recursive|-w|--workspace-root)(?:=|$)|^-F./,
  yarn: /^(?:workspace|workspaces)$/,
  bun: /^(?:-F|--filter)(?:=|$)|^-F./,
  deno: /^(?:-r|--recursive|-f|--filter|-c|--config)(?:=|$)|^-[fc]./,
  just: /^(?:-f|--justfile|-d)(?:=|$)|^-[fd]./,
};
/**
 * The files a program reads from the folder it starts in and each one above, to the workspace:
 * each may change what runs (Deno's import map, npm's `node-options`, yarn's `yarnPath`, bun's
 * `preload`, the scripts of the nearest `package.json`).
 */
export const CONFIGS: Record<string, string[]> = {
  deno: ["deno.json", "deno.jsonc", "package.json"],
  npm: ["package.json", ".npmrc"],
  pnpm: ["package.json", ".npmrc", "pnpm-workspace.yaml"],
  yarn: ["package.json", ".yarnrc", ".yarnrc.yml"],
  bun: ["package.json", "bunfig.toml", ".npmrc"],
};
/** The files a build tool reads its commands from, in the folder it starts in. */
export const CONVENTION_FILES: Record<string, string[]> = {
  make: ["Makefile", "makefile", "GNUmakefile"],
  gmake: ["Makefile", "makefile", "GNUmakefile"],
  npm: ["package.json"],
  npx: ["package.json"],
  pnpm: ["package.json"],
  yarn: ["package.json"],
  bun: ["package.json"],
  just: ["justfile", "Justfile", ".justfile"],
};
/** Folders every sandboxed command may write: code there is never the project's, nor pinned. */
export const SHARED_WRITABLE = /^\/(?:tmp|dev\/shm)(?:\/|$)/;
