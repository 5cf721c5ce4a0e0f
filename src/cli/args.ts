/**
 * The command line: argv parsed by `arg` (strict: an unknown option, or one without its value, is
 * a UsageError, exit code 2) into one `CommandLine` value, plus the help text. The options that
 * set a configuration key, and their help lines, come from the settings table; their values are
 * checked once, when the configuration loads. `arg` is a few hundred lines with nothing to set
 * up; Node's `util.parseArgs` would load Deno's Node compatibility layer into every start (see
 * src/core/path.ts), and its published polyfill (`@pkgjs/parseargs`) copies every global at its
 * import: 9-10 ms of a start here, measured alone with farm-bench against an empty bundle.
 */
import { closestName } from "../core/edit_distance.ts";
import arg from "arg";
import { type ConfigFlags, FLAG_KEYS, type SettingKey, settingOf } from "../config/settings.ts";
import { UsageError } from "./errors.ts";
import { ALL_OPTIONS, environmentHelp, optionsHelp } from "./options.ts";

/** The shells `tern completions` writes a script for. */
export const COMPLETION_SHELLS = ["bash", "zsh", "fish"] as const;
export type CompletionShell = typeof COMPLETION_SHELLS[number];

export type OutputFormat = "text" | "json" | "stream-json";

/** Options shared by every command that runs or configures a turn. */
export interface TurnOptions {
  cwd?: string;
  /** The options of configuration keys, as given (checked by `loadConfig()`). */
  settings: ConfigFlags;
  output: OutputFormat;
  /**
   * Text output: the answer goes to stdout exactly as the model wrote it (escape sequences
   * included) instead of made safe for a terminal.
   */
  raw?: boolean;
  /** Continue the newest session of the workspace. */
  continue?: boolean;
  /** Resume a session by id, id prefix or path ("" when given without a value). */
  resume?: string;
  /** Continue from this entry of the session (starts a branch). */
  from?: string;
}

/** What `tern sessions` does. */
export type SessionsAction = "list" | "show" | "tree" | "fork" | "export" | "compact" | "rewind";

/** What `tern mcp` does. */
export type McpAction = "list" | "tools" | "call" | "trust" | "untrust";

export type CommandLine =
  | {
    command: "run";
    task: string;
    /** `--skill`: a skill whose instructions come before the task. */
    skill?: string;
    /** `--image`: workspace image files that go with the task. */
    images?: string[];
    options: TurnOptions;
  }
  | {
    command: "context";
    /** A message: show the remembered facts it would get. */
    task?: string;
    json: boolean;
    options: TurnOptions;
  }
  | {
    command: "plan";
    /** The task to plan; absent with --resume / --continue. */
    task?: string;
    /** JSON of nodes to append to the continued plan. */
    append?: string;
    /** Ready nodes run at once (default: planConcurrency from config, 2). */
    concurrency?: number;
    options: TurnOptions;
  }
  | { command: "demo" }
  | { command: "config"; options: TurnOptions }
  | { command: "sandbox-explain"; options: TurnOptions }
  | { command: "sandbox-check"; call: string; options: TurnOptions }
  | { command: "audit"; session?: string; json: boolean; options: TurnOptions }
  | { command: "doctor"; options: TurnOptions }
  | {
    command: "models";
    /** Include every preset and configured provider, not only the ones usable now. */
    all: boolean;
    json: boolean;
    /** Skip asking OpenAI-compatible servers for their model lists. */
    offline: boolean;
    options: TurnOptions;
  }
  | {
    command: "sessions";
    action: SessionsAction;
    /** Session id, id prefix or path (list: none). */
    session?: string;
    /** fork: the entry to fork at. */
    entry?: string;
    all: boolean;
    json: boolean;
    focus?: string;
    /** rewind: what to restore (`--restore`), whether to apply (`--yes`), conflicts' fate. */
    rewind?: { restore?: string; yes: boolean; conflicts?: string };
    options: TurnOptions;
  }
  | {
    command: "hooks";
    action: "list" | "trust" | "untrust";
    /** trust: the digests `hooks list` showed for the files the person reviewed. */
    digests: string[];
    json: boolean;
    options: TurnOptions;
  }
  | {
    command: "mcp";
    action: McpAction;
    /** tools, call: the server. */
    server: string;
    /** call: the tool (the server's own name for it) and its JSON arguments. */
    tool?: string;
    args?: string;
    /** trust, untrust: the servers (none: every project server). */
    names: string[];
    json: boolean;
    options: TurnOptions;
  }
  | {
    command: "index";
    /** The folder to index as the workspace (default: --cwd, else the current directory). */
    path?: string;
    options: TurnOptions;
  }
  | {
    command: "search";
    query: string;
    /** How many results (default 10). */
    limit?: number;
    json: boolean;
    /** Show each signal's part of every score. */
    explain: boolean;
    options: TurnOptions;
  }
  | {
    command: "memory";
    action: "save" | "list" | "forget" | "log" | "undo";
    /** save: the fact; forget: the id (prefix); undo: the consolidation's id. */
    text?: string;
    /** save: for every workspace of the person, not only this one. */
    global: boolean;
    json: boolean;
    options: TurnOptions;
  }
  /** `tern --help`, or with `topic` (`tern run --help`, `tern help run`) that command's part. */
  | { command: "help"; topic?: string }
  | { command: "version" }
  /** The shell completion script for `shell` (bin/install writes them). */
  | { command: "completions"; shell: CompletionShell }
  /** The headless child protocol (a subagent): one request on stdin, JSON lines on stdout. */
  | { command: "child"; options: TurnOptions }
  | { command: "interactive"; options: TurnOptions }
  /** `tern rpc` and `tern acp`: a session driven by a program over stdin/stdout. */
  | { command: "rpc" | "acp"; options: TurnOptions };

/** The text of `tern --help` (built when asked: nothing at start-up). */
export function helpText(): string {
  return `Usage: tern [command] [options]

A terminal coding agent: reads and searches your code, edits files and runs commands.
With no command, tern opens an interactive session in the workspace (/help lists its slash
commands); with stdin or stdout not a terminal it reads one message per line instead.

Commands:
  run <task...>          run one task to completion and exit (also: -p, --once <task>)
  plan <task...>         plan the task as a graph of steps (the model answers JSON, checked:
                         unknown or duplicate ids and cycles are refused), then run ready
                         steps at once (--concurrency, default 2), each an agent of its own;
                         a failed step blocks what depends on it, the rest goes on
                         (also: --plan <task>)
  plan --resume [id]     continue the plan of a session (-c: the newest) without rerunning
                         steps that succeeded; --append '{"nodes":[…]}' adds steps first
  demo                   run the real agent loop, tools, sandbox, planner (two steps at
                         once), code search and session resume against a built-in
                         scripted model, offline; keeps its project and session in one
                         temporary folder and prints how to resume it (also: --demo)
  config                 print the effective configuration and where each value came from
  sandbox explain        print the exact Deno flags and bubblewrap arguments tool calls get
                         in this workspace (with --profile: for that profile)
  sandbox check -- <x>   say what would happen to a shell command, or to a tool call given
                         as JSON ('{"tool":"write","args":{"path":"a"}}'): run sandboxed,
                         ask or deny, and which rule, profile or classifier decided
  audit [session]        print the audit log of the newest run (or of that session/file);
                         --json prints the records
  doctor                 check the sandbox (bubblewrap, Deno) and the configuration; exit 1
                         when a check fails, 2 when the configuration does not load (the
                         sandbox is then checked with the built-in defaults)
  models                 models usable now: the catalog for providers with a key, plus
                         what the chosen provider's server lists (GET /models); --all:
                         every provider, --offline: no network, --json
  sessions list          sessions of this directory, newest first (--all: every directory)
  sessions show <id>     a session's settings, usage and current transcript (-c instead of an
                         id, here and below: the newest session of this directory)
  sessions tree <id>     every entry of a session as a tree (branches, labels, the leaf)
  sessions fork <id> [entry]
                         copy the path to the leaf (or to entry) into a new session
  sessions export <id>   the current transcript as Markdown (--json: the entries as JSON)
  sessions compact <id>  summarise the older part of a session now (--focus <text>)
  sessions rewind <id> <entry|undo>
                         show what going back to before that user message restores, then
                         with --yes do it: --restore files|conversation|both (default both);
                         files changed outside tern since are kept unless --conflicts overwrite
  mcp list               MCP servers (.mcp.json, .tern/mcp.json, ~/.tern/mcp.json): state,
                         tools, last error (--json)
  mcp tools <server>     a server's tools and the names the model sees (--json)
  mcp call <server> <tool> '<json>'
                         call one tool directly and print its result (--json)
  mcp trust <server...>  let the project's own MCP servers start (without a name: list
                         them and what they run); each definition is trusted once
  mcp untrust [server...]
                         withdraw that trust
  hooks list             lifecycle hooks (~/.tern/settings.json, .tern/settings.json,
                         .claude/settings.json): events, matchers, commands, trusted, and a
                         digest of each project file and the scripts it names (--json)
  hooks trust <digest...>
                         let the project hook files with these digests (from hooks list) run
                         as they were listed (definition and scripts pinned); a file changed
                         since is refused; without a digest nothing is trusted
  hooks untrust          withdraw that trust
  index [path]           index the workspace's code (or path's) for tern search: files under
                         .gitignore rules, symlinks not followed, binary, generated and
                         >1 MB files skipped; again, only changed files are re-read (the
                         index lives under TERN_HOME, never in the repository)
  context [message]      what goes into the system prompt: each part, the file it came from
                         (SYSTEM.md, AGENTS.md/CLAUDE.md at every level, APPEND_SYSTEM.md),
                         its estimated tokens, the skills index, prompt templates and any
                         problem with them; with a message, the facts it would get (--json)
  memory save <fact>     remember a fact for this workspace (--global: for every one);
                         each message gets the facts most relevant to it (memoryFacts, 5)
  memory list            the remembered facts with their ids (--json)
  memory forget <id>     forget a fact (an id prefix is enough)
  memory log             background consolidations into .tern/memory/ and their files (--json)
  memory undo <id>       restore the files a consolidation changed as they were
  run /name [args]       run the prompt template .tern/prompts/name.md (or ~/.tern/prompts/)
                         with its arguments; run --skill <name> <task> puts that skill's
                         instructions (SKILL.md) before the task
  search <query...>      the indexed code that best answers a query (words or identifiers):
                         path:line, kind, symbol, score, signature (--limit <n>, --json;
                         --explain: each signal's part of the score)
  rpc                    serve a long-lived session over JSON lines on stdin/stdout for
                         scripts and tools: prompt, steer, abort, fork, compact, get_state,
                         list_sessions, set_model (docs/rpc.md)
  acp                    serve the Agent Client Protocol on stdin/stdout, for editors
                         (Zed and others) that drive coding agents (docs/acp.md)
  completions <shell>    print the completion script for bash, zsh or fish (bin/install
                         writes them where each shell looks for them)
  help [command]         print this help, or a command's part of it (also: <command> --help)

Options:
${optionsHelp()}

${environmentHelp()}

Exit codes: 0 completed, 1 failed (a plan step, a tern mcp call), 2 usage or config error,
3 MAX_ROUNDS, 4 REPEATED_FAILURE, 5 EMPTY_RESPONSE, 6 LENGTH_LIMIT, 7 CLIENT_ERROR,
130 CANCELLED (Ctrl-C; a run or plan stopped by SIGTERM 143, by SIGHUP 129).
`;
}

/**
 * The help of one command: its entries under "Commands:" in `tern --help`, the options only it
 * takes, and where the rest are.
 */
export function commandHelpText(command: string): string {
  const lines = helpText().split("\n");
  const start = lines.indexOf("Commands:") + 1;
  const entries: string[][] = [];
  for (const line of lines.slice(start, lines.indexOf("", start))) {
    if (!line.startsWith("   ")) entries.push([line]);
    else entries.at(-1)?.push(line);
  }
  const own = entries.filter((entry) => entry[0].trim().split(" ")[0] === command).flat();
  const options = optionsHelp(command);
  return [
    `Usage of tern ${command} (every command: tern --help):`,
    "",
    ...own,
    ...(options === "" ? [] : ["", "Its options:", options]),
    "",
    "The options no single command owns (model, provider, review mode, sandbox profile, " +
    "output,\nsession -c/-r, the configuration keys) are in tern --help.",
    "",
  ].join("\n");
}

/** The options in `arg`'s form: `--name` with its type, `-x` naming its long option. */
const SPEC: arg.Spec = Object.fromEntries(
  ALL_OPTIONS.flatMap((option) => {
    const long = `--${option.name}`;
    const type = option.type === "boolean" ? Boolean : option.multiple ? [String] : String;
    return option.short ? [[long, type], [`-${option.short}`, long]] : [[long, type]];
  }),
);

/**
 * The commands (the first word). `child` is tern's own (a subagent's process) and not in the
 * help; `completions` is answered before the others' options are looked at.
 */
export const COMMANDS: ReadonlySet<string> = new Set([
  "run",
  "child",
  "plan",
  "demo",
  "config",
  "help",
  "sandbox",
  "audit",
  "doctor",
  "sessions",
  "models",
  "mcp",
  "hooks",
  "index",
  "search",
  "context",
  "memory",
  "rpc",
  "acp",
  "completions",
]);
/** The commands people type (not `child`), for a mistyped one's suggestion. */
const PUBLIC_COMMANDS = [...COMMANDS].filter((command) => command !== "child");
/** The actions of `tern sessions`. */
export const SESSIONS_ACTIONS: readonly SessionsAction[] = [
  "list",
  "show",
  "tree",
  "fork",
  "export",
  "compact",
  "rewind",
];
const OUTPUTS: readonly OutputFormat[] = ["text", "json", "stream-json"];

/** Parses argv (without the program name). @throws {UsageError} */
export function parseCommandLine(args: string[]): CommandLine {
  const { values, positionals } = parseOptions(bareResume(args));
  if (on(values, "help") || positionals[0] === "help") return helpCommand(positionals);
  const line = on(values, "version")
    ? versionCommand(positionals)
    : positionals[0] === "completions"
    ? completionsCommand(positionals.slice(1))
    : commandOf(values, positionals);
  refuseOtherCommandsOptions(line, values);
  return line;
}

/** The names an option's `commands` may give for `line`: `sessions` and `sessions rewind`. */
function commandNames(line: CommandLine): string[] {
  if (line.command === "sandbox-explain") return ["sandbox", "sandbox explain"];
  if (line.command === "sandbox-check") return ["sandbox", "sandbox check"];
  return "action" in line ? [line.command, `${line.command} ${line.action}`] : [line.command];
}

/**
 * The most commands the refusal of an option many commands take names: -C, the configuration
 * keys' options and -c, which most commands take, "do not apply" instead.
 */
const MOST_OWNERS_NAMED = 4;

/**
 * Refuses every option given that the command does not take: another command's (`tern run
 * --yes`), naming who takes it, or one many take but not this one (`tern demo -m x`).
 * @throws {UsageError}
 */
function refuseOtherCommandsOptions(line: CommandLine, values: Values): void {
  const names = commandNames(line);
  for (const option of ALL_OPTIONS) {
    const owners = option.commands;
    if (!owners || values[option.name] === undefined) continue;
    if (owners.some((owner) => names.includes(owner))) continue;
    const here = line.command === "interactive"
      ? "an interactive session"
      : line.command === "version"
      ? "tern --version"
      : `tern ${names.at(-1)}`;
    // `tern run /review a --focus=x`: the template's argument, taken for an option.
    const template = line.command === "run" && line.task.startsWith("/")
      ? `; to give it to the template, put the template's arguments after "--": tern run ${
        line.task.split(" ")[0]
      } -- <arguments>`
      : "";
    // `tern sessions list -o json`: the command's own JSON is --json.
    const jsonOwners = ALL_OPTIONS.find((other) => other.name === "json")?.commands ?? [];
    const json = option.name === "output" && jsonOwners.some((owner) => names.includes(owner))
      ? `; ${here} prints JSON with --json`
      : "";
    if (option.shared && owners.length > MOST_OWNERS_NAMED) {
      throw new UsageError(`--${option.name} does not apply to ${here}: leave it out${template}`);
    }
    const commands = owners.filter((owner) => owner !== "interactive");
    const list = commands.length === 1
      ? commands[0]
      : `${commands.slice(0, -1).join(", ")} and ${commands.at(-1)}`;
    const interactive = owners.includes("interactive") ? " and to interactive sessions" : "";
    throw new UsageError(
      `--${option.name} belongs to tern ${list}${interactive}, not ${here}${template}${json}`,
    );
  }
}

/** The command `positionals` and `values` ask for. @throws {UsageError} */
function commandOf(values: Values, positionals: string[]): CommandLine {
  const options = turnOptions(values);
  const [first, ...rest] = positionals;
  if (on(values, "demo") || first === "demo") {
    if (rest.length > 0 || (first !== "demo" && first !== undefined)) {
      const extra = first === "demo" ? rest : positionals;
      throw new UsageError(`Unexpected arguments after demo: "${extra.join(" ")}"`);
    }
    return { command: "demo" };
  }
  if (text(values, "once") !== undefined) {
    if (positionals.length > 0) {
      throw new UsageError(`Unexpected arguments besides --once: "${positionals.join(" ")}"`);
    }
    return {
      command: "run",
      task: requireTask(text(values, "once") ?? ""),
      ...skillOf(values),
      ...imagesOf(values),
      options,
    };
  }
  if (first === "run") {
    const task = rest.join(" ");
    // `tern run -r "fix it"`: the task was read as the session's id.
    const resume = text(values, "resume");
    if (task.trim() === "" && resume) {
      throw new UsageError(
        `The task is empty: --resume took "${resume}" as the session's id; give the task ` +
          `after it: tern run -r <id> "task" (or -c "task" for the newest session)`,
      );
    }
    // With --skill, the skill alone is a task.
    if (text(values, "skill") === undefined) requireTask(task);
    return { command: "run", task, ...skillOf(values), ...imagesOf(values), options };
  }
  if (first === "memory") return memoryCommand(rest, values, options);
  if (first === "child") {
    if (rest.length > 0) throw new UsageError("tern child takes its request on stdin");
    return { command: "child", options };
  }
  if (first === "context") {
    const task = rest.join(" ").trim();
    return {
      command: "context",
      ...(task === "" ? {} : { task }),
      json: on(values, "json"),
      options,
    };
  }
  if (first === "plan" || text(values, "plan") !== undefined) {
    if (text(values, "plan") !== undefined && positionals.length > 0) {
      throw new UsageError(`Unexpected arguments besides --plan: "${positionals.join(" ")}"`);
    }
    const words = text(values, "plan") !== undefined ? [text(values, "plan") ?? ""] : rest;
    return {
      command: "plan",
      task: words.length > 0 ? requireTask(words.join(" ")) : undefined,
      append: text(values, "append"),
      concurrency: settingInt("--concurrency", text(values, "concurrency"), "planConcurrency"),
      options,
    };
  }
  if (first === "config") {
    if (rest.length > 0) {
      throw new UsageError(`Unexpected arguments after config: "${rest.join(" ")}"`);
    }
    return { command: "config", options };
  }
  if (first === "sandbox") return sandboxCommand(rest, options);
  if (first === "audit") {
    if (rest.length > 1) {
      throw new UsageError(`Unexpected arguments after audit: "${rest.join(" ")}"`);
    }
    return { command: "audit", session: rest[0], json: on(values, "json"), options };
  }
  if (first === "sessions") {
    return sessionsCommand(rest, {
      all: on(values, "all"),
      json: on(values, "json"),
      focus: text(values, "focus"),
      rewind: {
        restore: text(values, "restore"),
        yes: on(values, "yes"),
        conflicts: text(values, "conflicts"),
      },
    }, options);
  }
  if (first === "models") {
    if (rest.length > 0) {
      throw new UsageError(`Unexpected arguments after models: "${rest.join(" ")}"`);
    }
    return {
      command: "models",
      all: on(values, "all"),
      json: on(values, "json"),
      offline: on(values, "offline"),
      options,
    };
  }
  if (first === "index") {
    if (rest.length > 1) {
      throw new UsageError(`Unexpected arguments after index: "${rest.slice(1).join(" ")}"`);
    }
    return { command: "index", path: rest[0], options };
  }
  if (first === "search") {
    const query = rest.join(" ");
    if (query.trim() === "") {
      throw new UsageError(
        'The query is empty: say what to look for, e.g. tern search "parse args"',
      );
    }
    return {
      command: "search",
      query,
      limit: positiveInt("--limit", text(values, "limit")),
      json: on(values, "json"),
      explain: on(values, "explain"),
      options,
    };
  }
  if (first === "mcp") return mcpCommand(rest, on(values, "json"), options);
  if (first === "hooks") {
    const [action = "list", ...more] = rest;
    if (action !== "list" && action !== "trust" && action !== "untrust") {
      throw new UsageError(`Unknown hooks subcommand "${action}": expected list, trust or untrust`);
    }
    if (more.length > 0 && action !== "trust") {
      throw new UsageError(`Unexpected arguments after hooks ${action}: "${more.join(" ")}"`);
    }
    return { command: "hooks", action, digests: more, json: on(values, "json"), options };
  }
  if (first === "rpc" || first === "acp") {
    if (rest.length > 0) {
      throw new UsageError(`Unexpected arguments after ${first}: "${rest.join(" ")}"`);
    }
    return { command: first, options };
  }
  if (first === "doctor") {
    if (rest.length > 0) {
      throw new UsageError(`Unexpected arguments after doctor: "${rest.join(" ")}"`);
    }
    return { command: "doctor", options };
  }
  if (first !== undefined && !COMMANDS.has(first)) {
    const meant = closest(first, PUBLIC_COMMANDS);
    const hint = meant === undefined ? "" : `did you mean tern ${meant}? Or, `;
    throw new UsageError(
      `Unknown command "${first}": ${hint}to run a task, use tern run "${first} …"`,
    );
  }
  return { command: "interactive", options };
}

/**
 * `tern --help`, `tern run --help` or `tern help run`: the help of a command people type. With
 * `--help` the rest of a command line may stay (it is not run); after `help <command>` nothing
 * may follow.
 */
function helpCommand(positionals: string[]): CommandLine {
  const [first, second, ...more] = positionals;
  const topic = first === "help" ? second : first;
  if (topic === undefined) return { command: "help" };
  if (!COMMANDS.has(topic) || topic === "child") {
    const meant = closest(topic, PUBLIC_COMMANDS);
    throw new UsageError(
      `No help for "${topic}": it is not a tern command (${
        meant === undefined ? "" : `did you mean ${meant}? `
      }tern --help lists them)`,
    );
  }
  if (first === "help" && more.length > 0) {
    throw new UsageError(`Unexpected arguments after help ${topic}: "${more.join(" ")}"`);
  }
  return { command: "help", topic };
}

/** `tern --version`, which takes nothing else. */
function versionCommand(positionals: string[]): CommandLine {
  if (positionals.length > 0) {
    throw new UsageError(`Unexpected arguments besides --version: "${positionals.join(" ")}"`);
  }
  return { command: "version" };
}

function completionsCommand(rest: string[]): CommandLine {
  const [shell, ...more] = rest;
  if (shell === undefined) {
    throw new UsageError(
      "Missing shell for completions: tern completions bash, zsh or fish prints that shell's " +
        "script (e.g. tern completions bash > ~/.local/share/bash-completion/completions/tern)",
    );
  }
  if (!(COMPLETION_SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(
      `Unknown shell "${shell}": expected bash, zsh or fish (tern completions bash)`,
    );
  }
  if (more.length > 0) {
    throw new UsageError(`Unexpected arguments after completions ${shell}: "${more.join(" ")}"`);
  }
  return { command: "completions", shell: shell as CompletionShell };
}

function memoryCommand(rest: string[], values: Values, options: TurnOptions): CommandLine {
  const [action = "list", ...words] = rest;
  const base = {
    command: "memory" as const,
    global: on(values, "global"),
    json: on(values, "json"),
  };
  switch (action) {
    case "list":
    case "log":
      if (words.length > 0) {
        throw new UsageError(`Unexpected arguments after memory ${action}: "${words.join(" ")}"`);
      }
      return { ...base, action, options };
    case "undo":
      if (words.length !== 1) {
        throw new UsageError(
          "Give one consolidation id to undo: tern memory undo <id> (see tern memory log)",
        );
      }
      return { ...base, action, text: words[0], options };
    case "save": {
      const text = words.join(" ");
      if (text.trim() === "") {
        throw new UsageError('Nothing to save: tern memory save "the fact" [--global]');
      }
      return { ...base, action, text, options };
    }
    case "forget":
      if (words.length !== 1) {
        throw new UsageError(
          "Give one fact id to forget: tern memory forget <id> (see tern memory list)",
        );
      }
      return { ...base, action, text: words[0], options };
    default:
      throw new UsageError(
        `Unknown memory subcommand "${action}": expected save, list, forget, log or undo`,
      );
  }
}

function sandboxCommand(rest: string[], options: TurnOptions): CommandLine {
  const [sub, ...words] = rest;
  if (sub === "explain" && words.length === 0) return { command: "sandbox-explain", options };
  if (sub === "check") {
    const call = words.join(" ").trim();
    if (call === "") {
      throw new UsageError(
        'Nothing to check: give a shell command or a tool call after "--", e.g. ' +
          "tern sandbox check -- git push",
      );
    }
    return { command: "sandbox-check", call, options };
  }
  throw new UsageError(
    sub === undefined
      ? 'Missing sandbox subcommand: use "tern sandbox explain" or "tern sandbox check -- <command>"'
      : `Unknown sandbox subcommand "${[sub, ...words].join(" ")}": expected explain or check`,
  );
}

function sessionsCommand(
  rest: string[],
  flags: {
    all: boolean;
    json: boolean;
    focus?: string;
    rewind: { restore?: string; yes: boolean; conflicts?: string };
  },
  options: TurnOptions,
): CommandLine {
  const [action = "list", ...words] = rest;
  // `sessions fork -c <entry>`, `sessions rewind -c <entry>`: with -c the only word is the entry.
  const takesEntry = action === "fork" || action === "rewind";
  const places = takesEntry && options.continue ? [undefined, ...words] : words;
  const [session, entry] = places;
  if (!SESSIONS_ACTIONS.includes(action as SessionsAction)) {
    throw new UsageError(
      `Unknown sessions subcommand "${action}": expected ${SESSIONS_ACTIONS.join(", ")}`,
    );
  }
  const most = action === "list" ? 0 : takesEntry ? 2 : 1;
  if (places.length > most) {
    throw new UsageError(
      `Unexpected arguments after sessions ${action}: "${places.slice(most).join(" ")}"`,
    );
  }
  if (action !== "list" && session !== undefined && options.continue) {
    throw new UsageError(
      `Give either a session or -c for "sessions ${action}", not both: -c is the newest session`,
    );
  }
  if (action !== "list" && session === undefined && !options.continue) {
    throw new UsageError(
      `Missing session for "sessions ${action}": give its id (see \`tern sessions list\`) ` +
        "or -c for the newest",
    );
  }
  const { rewind, ...plain } = flags;
  if (action !== "rewind") {
    return {
      command: "sessions",
      action: action as SessionsAction,
      session,
      entry,
      ...plain,
      options,
    };
  }
  const target = entry;
  if (target === undefined) {
    throw new UsageError(
      'Missing entry for "sessions rewind": give a user message\'s entry id (see ' +
        "`tern sessions tree`) or undo",
    );
  }
  if (rewind.restore !== undefined && !["files", "conversation", "both"].includes(rewind.restore)) {
    throw new UsageError(
      `Unknown --restore "${rewind.restore}": expected files, conversation or both`,
    );
  }
  if (rewind.conflicts !== undefined && !["keep", "overwrite"].includes(rewind.conflicts)) {
    throw new UsageError(`Unknown --conflicts "${rewind.conflicts}": expected keep or overwrite`);
  }
  return {
    command: "sessions",
    action: "rewind",
    session,
    entry: target,
    ...plain,
    rewind,
    options,
  };
}

function mcpCommand(rest: string[], json: boolean, options: TurnOptions): CommandLine {
  const [action = "list", ...words] = rest;
  const base = { command: "mcp" as const, server: words[0] ?? "", names: [], json, options };
  const extra = (most: number) => {
    if (words.length > most) {
      throw new UsageError(
        `Unexpected arguments after mcp ${action}: "${words.slice(most).join(" ")}"`,
      );
    }
  };
  switch (action) {
    case "list":
      extra(0);
      return { ...base, action };
    case "tools":
      extra(1);
      if (words[0] === undefined) {
        throw new UsageError('Missing server for "mcp tools": give its name (see `tern mcp list`)');
      }
      return { ...base, action };
    case "call":
      extra(3);
      if (words.length < 2) {
        throw new UsageError(
          "Missing server or tool for \"mcp call\": tern mcp call <server> <tool> '<json>'",
        );
      }
      return { ...base, action, tool: words[1], args: words[2] };
    case "trust":
    case "untrust":
      return { ...base, action, server: "", names: words };
    default:
      throw new UsageError(
        `Unknown mcp subcommand "${action}": expected list, tools, call, trust or untrust`,
      );
  }
}

/**
 * The options given (by long name, without the dashes) and the other words, in order.
 * @throws {UsageError} for an unknown option, a value missing, or a value for a switch.
 */
function parseOptions(args: string[]): { values: Values; positionals: string[] } {
  const end = args.includes("--") ? args.indexOf("--") : args.length;
  for (const word of args.slice(0, end)) {
    // `arg` takes `--raw=false` for `--raw`: a switch given a value is refused instead.
    const name = word.startsWith("--") && word.includes("=")
      ? word.slice(0, word.indexOf("="))
      : "";
    if (SPEC[name] === Boolean) {
      throw new UsageError(`Option "${name}" takes no value: give ${name} alone`);
    }
  }
  let parsed: arg.Result<arg.Spec>;
  try {
    parsed = arg(SPEC, { argv: args });
  } catch (error) {
    throw new UsageError(usageMessage(error, args));
  }
  refuseRepeated(args.slice(0, end));
  const values: Record<string, string | boolean | (string | boolean)[]> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (key !== "_" && value !== undefined) values[key.slice(2)] = value;
  }
  return { values, positionals: parsed._ };
}

/**
 * Refuses an option of one value given again with another (`-o json … -o text`): `arg` keeps
 * the last without a word, and which one was meant is unclear. The values are not quoted: one
 * may hold a key (a --base-url with credentials).
 * @throws {UsageError}
 */
function refuseRepeated(words: readonly string[]): void {
  const seen = new Map<string, { given: string; value: string }>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const eq = word.startsWith("--") ? word.indexOf("=") : -1;
    const given = eq < 0 ? word : word.slice(0, eq);
    const alias = SPEC[given];
    const long = typeof alias === "string" ? alias : given;
    if (!given.startsWith("-") || SPEC[long] !== String) continue;
    const value = eq < 0 ? words[++i] : word.slice(eq + 1);
    const before = seen.get(long);
    if (before !== undefined && before.value !== value) {
      const as = before.given === given ? `"${given}"` : `"${before.given}" and "${given}"`;
      throw new UsageError(
        `Option ${long} is given twice with different values (as ${as}): give it once, with ` +
          "the value you mean",
      );
    }
    seen.set(long, { given, value: value ?? "" });
  }
}

/**
 * `arg`'s error as tern says it: the option as given, and how to give it right. (UsageError
 * adds where the usage is.)
 */
function usageMessage(error: unknown, args: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof arg.ArgError ? error.code : "";
  const option = /: (\S+)(?: \(alias for (\S+)\))?$/.exec(message);
  if (option === null) return message;
  const [, given, long] = option;
  if (code === "ARG_UNKNOWN_OPTION") {
    const meant = given.startsWith("--")
      ? closest(given.slice(2).split("=")[0], ALL_OPTIONS.map((option) => option.name))
      : undefined;
    return `Unknown option "${given}"${meant === undefined ? "" : `: did you mean --${meant}?`}`;
  }
  // `--limit -1`: the value is there, but `arg` reads a word that starts with "-" as an option.
  const at = args.indexOf(given);
  const next = at < 0 ? undefined : args[at + 1];
  if (code.startsWith("ARG_MISSING_REQUIRED") && next !== undefined && /^-\d/.test(next)) {
    return `Option "${given}" was given "${next}", which is read as an option: give it as ` +
      `${long ?? given}=${next}`;
  }
  if (code === "ARG_MISSING_REQUIRED_SHORTARG") {
    return `Option "${given}" requires a value: give it as the next word (${given} <value>)`;
  }
  if (code === "ARG_MISSING_REQUIRED_LONGARG") {
    const name = long ?? given;
    return `Option "${given}" requires a value: ${given} <value>` +
      ` (a value that starts with "-" as ${name}=<value>)`;
  }
  return message;
}

/**
 * The one of `known` a mistyped `word` most likely meant: within two edits (a letter added,
 * dropped, changed, or two swapped) for words of five letters or more; a shorter word, whose
 * changed letter could make another word, only by a letter added, dropped or two swapped.
 */
function closest(word: string, known: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  const sorted = (text: string) => [...text].sort().join("");
  const changed = (candidate: string) =>
    typed.length < 5 && candidate.length === typed.length && sorted(candidate) !== sorted(typed);
  // Ties go as for config keys (closestName): the same length, then the same letters.
  return closestName(
    typed,
    known.filter((candidate) => !changed(candidate)),
    typed.length >= 5 ? 3 : 2,
  );
}

/** A `--resume`/`-r` with no value (last, or followed by an option) becomes `--resume=`. */
function bareResume(args: string[]): string[] {
  const end = args.includes("--") ? args.indexOf("--") : args.length;
  return args.map((arg, i) => {
    const bare = i < end && (arg === "--resume" || arg === "-r");
    const next = args[i + 1];
    return bare && (next === undefined || next.startsWith("-")) ? "--resume=" : arg;
  });
}

/**
 * `task`, refused when it is empty or a lone "-": a command's task is its words, never stdin,
 * and "-" sent as it is would spend a model call on nothing.
 * @throws {UsageError}
 */
function requireTask(task: string): string {
  const fromFile = 'give a file\'s text as one word: "$(cat task.md)"';
  if (task.trim() === "") {
    throw new UsageError(`The task is empty: say what tern should do (${fromFile})`);
  }
  if (task.trim() === "-") {
    throw new UsageError(
      `The task is "-": the task is not read from stdin (tern with no command reads one ` +
        `message a line from it); ${fromFile}`,
    );
  }
  return task;
}

type Values = { readonly [name: string]: string | boolean | (string | boolean)[] | undefined };

/** `{images}` when --image was given, else nothing. */
function imagesOf(values: Values): { images?: string[] } {
  const images = values.image;
  return Array.isArray(images) && images.length > 0 ? { images: images.map(String) } : {};
}

/** `{skill}` when --skill was given, else nothing. */
function skillOf(values: Values): { skill?: string } {
  const skill = text(values, "skill");
  return skill === undefined ? {} : { skill };
}

/** The value of a string option. */
function text(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** Whether a boolean option was given. */
function on(values: Values, name: string): boolean {
  return values[name] === true;
}

function turnOptions(values: Values): TurnOptions {
  const output = text(values, "output") ?? "text";
  if (!OUTPUTS.includes(output as OutputFormat)) {
    throw new UsageError(
      `Invalid --output "${output}": expected one of ${OUTPUTS.map((o) => `"${o}"`).join(", ")}`,
    );
  }
  // --no-sandbox drops every profile's limits: with --profile too, which was meant is unclear.
  if (on(values, "no-sandbox") && values.profile !== undefined) {
    throw new UsageError(
      "--no-sandbox and --profile cannot be used together: --no-sandbox runs tools with no " +
        "sandbox, so no profile's limits apply; pick one",
    );
  }
  const settings: Record<string, string | boolean> = {};
  for (const key of FLAG_KEYS) {
    const value = values[settingOf(key).flag!.name];
    // Only --image takes a list, and it is no setting.
    if (value !== undefined && !Array.isArray(value)) settings[key] = value;
  }
  return {
    cwd: text(values, "cwd"),
    settings: settings as ConfigFlags,
    output: output as OutputFormat,
    raw: values.raw === undefined ? undefined : on(values, "raw"),
    continue: values.continue === undefined ? undefined : on(values, "continue"),
    resume: text(values, "resume"),
    from: text(values, "from"),
  };
}

/**
 * The value of an option that gives, for one command, what setting `key` gives every run: it
 * takes the setting's range and says what it expects in the setting's words.
 * @throws {UsageError} for anything but a whole number in that range.
 */
function settingInt(flag: string, value: string | undefined, key: SettingKey): number | undefined {
  if (value === undefined) return undefined;
  const { rule, expect } = settingOf(key);
  const n = Number(value);
  const [min, max] = rule.kind === "integer" ? [rule.min, rule.max ?? Infinity] : [1, Infinity];
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`Invalid ${flag} "${value}": expected ${expect}`);
  }
  return n;
}

function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`Invalid ${flag} "${value}": expected a positive integer`);
  }
  return n;
}
