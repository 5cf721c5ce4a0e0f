/**
 * The command line: `node:util` parseArgs (built in, nearly free at start-up) plus the help
 * text. Turns argv into one `CommandLine` value or throws a UsageError (exit code 2).
 */
import { parseArgs } from "node:util";
import { UsageError } from "./errors.ts";

export type OutputFormat = "text" | "json" | "stream-json";

/** Options shared by every command that runs or configures a turn. */
export interface TurnOptions {
  cwd?: string;
  model?: string;
  baseUrl?: string;
  provider?: string;
  thinking?: ThinkingLevel;
  /** `provider/model` pairs, in order. */
  fallback?: string[];
  maxRounds?: number;
  maxTokens?: number;
  temperature?: number;
  profile?: string;
  mode?: ReviewMode;
  noSandbox?: boolean;
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
export type SessionsAction = "list" | "show" | "tree" | "fork" | "export" | "compact";

export type ReviewMode = "ask" | "auto" | "bypass";

/** What `tern mcp` does. */
export type McpAction = "list" | "tools" | "call" | "trust" | "untrust";

export type ThinkingLevel = "off" | "low" | "medium" | "high";

export type CommandLine =
  | { command: "run"; task: string; options: TurnOptions }
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
  | { command: "help" }
  | { command: "version" }
  | { command: "interactive"; options: TurnOptions };

export const HELP = `Usage: tern [command] [options]

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
  demo                   run the real agent loop and tools against a built-in scripted
                         model, offline (also: --demo)
  config                 print the effective configuration and where each value came from
  sandbox explain        print the exact Deno flags and bubblewrap arguments tool calls get
                         in this workspace (with --profile: for that profile)
  sandbox check -- <x>   say what would happen to a shell command, or to a tool call given
                         as JSON ('{"tool":"write","args":{"path":"a"}}'): run sandboxed,
                         ask or deny, and which rule, profile or classifier decided
  audit [session]        print the audit log of the newest run (or of that session/file);
                         --json prints the records
  doctor                 check the sandbox (bubblewrap, Deno) and the configuration
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
  mcp list               MCP servers (.mcp.json, .tern/mcp.json, ~/.tern/mcp.json): state,
                         tools, last error (--json)
  mcp tools <server>     a server's tools and the names the model sees (--json)
  mcp call <server> <tool> '<json>'
                         call one tool directly and print its result (--json)
  mcp trust <server...>  let the project's own MCP servers start (without a name: list
                         them and what they run); each definition is trusted once
  mcp untrust [server...]
                         withdraw that trust
  help                   print this help

Options:
  -p, --once <task>      run one task non-interactively (same as \`tern run\`)
  -C, --cwd <dir>        workspace directory (default: the current directory)
  -m, --model <name>     model name (a catalog model alone picks its provider)
      --provider <name>  a provider from config, a preset (openai, openai-responses,
                         anthropic, openrouter, ollama, lmstudio, vllm, llamacpp) or an
                         API style (openai, openai-responses, anthropic)
      --base-url <url>   the provider's API base URL (e.g. http://127.0.0.1:8080/v1)
      --thinking <level> off, low, medium (default) or high; models without thinking
                         get none
      --fallback <list>  provider/model pairs tried in order when the model keeps
                         failing (comma-separated)
      --max-rounds <n>   model calls allowed per turn (default 25)
      --max-tokens <n>   output token limit per model call
      --temperature <t>  sampling temperature, 0 to 2
  -s, --profile <name>   sandbox profile: :read-only, :workspace (default), :external
                         (workspace + network), :danger-full-access, or a custom one
      --mode <mode>      who approves calls the profile and rules leave open: ask (default,
                         a person; denied when not interactive), auto (a reviewer model),
                         bypass (no review; the sandbox still applies)
      --no-sandbox       run tools with no sandbox at all (review still applies)
  -o, --output <format>  text (default), json (one final object) or stream-json (events)
      --raw              text output: the answer exactly as the model wrote it, escape
                         sequences included (for pipes; by default they are removed)
  -c, --continue         continue the newest session of this directory
  -r, --resume [id]      continue a session by id, id prefix or path (interactive: a
                         picker without an id)
      --from <entry>     with --continue or --resume: continue from that entry of the
                         session (a new branch; see \`tern sessions tree\`)
  -V, --version          print the version
  -h, --help             print this help

Environment: TERN_API_KEY (the chosen provider's key; else OPENAI_API_KEY,
ANTHROPIC_API_KEY or OPENROUTER_API_KEY by provider), TERN_PROVIDER, TERN_BASE_URL,
TERN_MODEL, TERN_THINKING, TERN_FALLBACK, TERN_MAX_RETRIES, TERN_MAX_ROUNDS, TERN_PROFILE,
TERN_MODE, TERN_NO_SANDBOX, TERN_HOME (default ~/.tern), TERN_EXTRA_ENV (more variables
tern may read, for \${VAR} in MCP server definitions), TERN_EXTRA_HOSTS (more hosts tern
may connect to: it reaches only those of URLs in its config, environment and command line);
see .env.example. Config files: ~/.tern/config.jsonc and <project>/.tern/config.jsonc; MCP
servers: ~/.tern/mcp.json, ~/.tern/mcp/*.json, .mcp.json, .tern/mcp.json, .tern/mcp/*.json.

Exit codes: 0 completed, 1 failed (a plan step, a tern mcp call), 2 usage or config error,
3 MAX_ROUNDS, 4 REPEATED_FAILURE, 5 EMPTY_RESPONSE, 6 LENGTH_LIMIT, 7 CLIENT_ERROR,
130 CANCELLED.
`;

const OPTIONS = {
  once: { type: "string", short: "p" },
  plan: { type: "string" },
  append: { type: "string" },
  concurrency: { type: "string" },
  demo: { type: "boolean" },
  cwd: { type: "string", short: "C" },
  model: { type: "string", short: "m" },
  "base-url": { type: "string" },
  provider: { type: "string" },
  thinking: { type: "string" },
  fallback: { type: "string" },
  offline: { type: "boolean" },
  "max-rounds": { type: "string" },
  "max-tokens": { type: "string" },
  temperature: { type: "string" },
  output: { type: "string", short: "o" },
  raw: { type: "boolean" },
  profile: { type: "string", short: "s" },
  mode: { type: "string" },
  "no-sandbox": { type: "boolean" },
  json: { type: "boolean" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string", short: "r" },
  from: { type: "string" },
  all: { type: "boolean" },
  focus: { type: "string" },
  version: { type: "boolean", short: "V" },
  help: { type: "boolean", short: "h" },
} as const;

const COMMANDS = new Set([
  "run",
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
]);
const SESSIONS_ACTIONS: readonly SessionsAction[] = [
  "list",
  "show",
  "tree",
  "fork",
  "export",
  "compact",
];
const MODES: readonly ReviewMode[] = ["ask", "auto", "bypass"];
const OUTPUTS: readonly OutputFormat[] = ["text", "json", "stream-json"];

/** Parses argv (without the program name). @throws {UsageError} */
export function parseCommandLine(args: string[]): CommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: bareResume(args),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unknown = /^Unknown option '([^']+)'/.exec(message);
    throw new UsageError(unknown ? `Unknown option "${unknown[1]}"` : message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === "help") return { command: "help" };
  if (values.version) return { command: "version" };
  const options = turnOptions(values);
  const [first, ...rest] = positionals;
  const planning = first === "plan" || values.plan !== undefined;
  if (!planning && (values.append !== undefined || values.concurrency !== undefined)) {
    throw new UsageError("--append and --concurrency belong to tern plan");
  }
  if (values.demo || first === "demo") {
    if (rest.length > 0 || (first !== "demo" && first !== undefined)) {
      throw new UsageError(`Unexpected arguments after demo: "${positionals.join(" ")}"`);
    }
    return { command: "demo" };
  }
  if (values.once !== undefined) {
    if (positionals.length > 0) {
      throw new UsageError(`Unexpected arguments besides --once: "${positionals.join(" ")}"`);
    }
    return { command: "run", task: requireTask(values.once), options };
  }
  if (first === "run") return { command: "run", task: requireTask(rest.join(" ")), options };
  if (first === "plan" || values.plan !== undefined) {
    if (values.plan !== undefined && positionals.length > 0) {
      throw new UsageError(`Unexpected arguments besides --plan: "${positionals.join(" ")}"`);
    }
    const words = values.plan !== undefined ? [values.plan] : rest;
    return {
      command: "plan",
      task: words.length > 0 ? requireTask(words.join(" ")) : undefined,
      append: values.append,
      concurrency: positiveInt("--concurrency", values.concurrency),
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
    return { command: "audit", session: rest[0], json: values.json ?? false, options };
  }
  if (first === "sessions") {
    return sessionsCommand(rest, {
      all: values.all ?? false,
      json: values.json ?? false,
      focus: values.focus,
    }, options);
  }
  if (first === "models") {
    if (rest.length > 0) {
      throw new UsageError(`Unexpected arguments after models: "${rest.join(" ")}"`);
    }
    return {
      command: "models",
      all: values.all ?? false,
      json: values.json ?? false,
      offline: values.offline ?? false,
      options,
    };
  }
  if (first === "mcp") return mcpCommand(rest, values.json ?? false, options);
  if (first === "doctor") {
    if (rest.length > 0) {
      throw new UsageError(`Unexpected arguments after doctor: "${rest.join(" ")}"`);
    }
    return { command: "doctor", options };
  }
  if (first !== undefined && !COMMANDS.has(first)) {
    throw new UsageError(`Unknown command "${first}": to run a task, use tern run "${first} …"`);
  }
  return { command: "interactive", options };
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
  flags: { all: boolean; json: boolean; focus?: string },
  options: TurnOptions,
): CommandLine {
  const [action = "list", session, entry, ...extra] = rest;
  if (!SESSIONS_ACTIONS.includes(action as SessionsAction)) {
    throw new UsageError(
      `Unknown sessions subcommand "${action}": expected ${SESSIONS_ACTIONS.join(", ")}`,
    );
  }
  const most = action === "list" ? 0 : action === "fork" ? 2 : 1;
  const given = [session, entry, ...extra].filter((word) => word !== undefined);
  if (given.length > most) {
    throw new UsageError(
      `Unexpected arguments after sessions ${action}: "${given.slice(most).join(" ")}"`,
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
  return {
    command: "sessions",
    action: action as SessionsAction,
    session,
    entry,
    ...flags,
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

/** A `--resume`/`-r` with no value (last, or followed by an option) becomes `--resume=`. */
function bareResume(args: string[]): string[] {
  const end = args.includes("--") ? args.indexOf("--") : args.length;
  return args.map((arg, i) => {
    const bare = i < end && (arg === "--resume" || arg === "-r");
    const next = args[i + 1];
    return bare && (next === undefined || next.startsWith("-")) ? "--resume=" : arg;
  });
}

function requireTask(task: string): string {
  if (task.trim() === "") throw new UsageError("The task is empty: say what tern should do");
  return task;
}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];

function turnOptions(values: Values): TurnOptions {
  const output = values.output ?? "text";
  if (!OUTPUTS.includes(output as OutputFormat)) {
    throw new UsageError(
      `Invalid --output "${output}": expected one of ${OUTPUTS.map((o) => `"${o}"`).join(", ")}`,
    );
  }
  return {
    cwd: values.cwd,
    model: values.model,
    baseUrl: values["base-url"],
    provider: values.provider,
    thinking: thinkingLevel(values.thinking),
    fallback: values.fallback?.split(",").map((item) => item.trim()).filter((item) => item !== ""),
    maxRounds: positiveInt("--max-rounds", values["max-rounds"]),
    maxTokens: positiveInt("--max-tokens", values["max-tokens"]),
    temperature: number("--temperature", values.temperature),
    profile: values.profile,
    mode: reviewMode(values.mode),
    noSandbox: values["no-sandbox"],
    output: output as OutputFormat,
    raw: values.raw,
    continue: values.continue,
    resume: values.resume,
    from: values.from,
  };
}

const THINKING: readonly ThinkingLevel[] = ["off", "low", "medium", "high"];

function thinkingLevel(value: string | undefined): ThinkingLevel | undefined {
  if (value === undefined) return undefined;
  if (!THINKING.includes(value as ThinkingLevel)) {
    throw new UsageError(
      `Invalid --thinking "${value}": expected "off", "low", "medium" or "high"`,
    );
  }
  return value as ThinkingLevel;
}

function reviewMode(value: string | undefined): ReviewMode | undefined {
  if (value === undefined) return undefined;
  if (!MODES.includes(value as ReviewMode)) {
    throw new UsageError(`Invalid --mode "${value}": expected "ask", "auto" or "bypass"`);
  }
  return value as ReviewMode;
}

function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`Invalid ${flag} "${value}": expected a positive integer`);
  }
  return n;
}

function number(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) {
    throw new UsageError(`Invalid ${flag} "${value}": expected a number`);
  }
  return n;
}
