/**
 * The options of the command line: its own (`--cwd`, `--output`, …) and one per configuration
 * key with a flag in the settings table, with their lines in `tern --help`.
 */
import { FLAG_KEYS, SETTING_KEYS, settingOf } from "../config/settings.ts";

/** An option of the command line itself (not a configuration key). */
export interface CliOption {
  name: string;
  short?: string;
  type: "string" | "boolean";
  /** True when the option may be given more than once (its value is then a list). */
  multiple?: boolean;
  /** The value's placeholder in the help (`<dir>`). */
  arg?: string;
  /** Its line under "Options:"; none for options the command list describes. */
  help?: string;
  /**
   * The commands that take it, as `command` or `command action` (`sessions rewind`); none:
   * every command. Any other command refuses it, naming these.
   */
  commands?: readonly string[];
  /**
   * No single command owns it (`-C`, `--output`, the configuration keys' options): `tern --help`
   * lists it, a command's own help does not.
   */
  shared?: boolean;
}

/**
 * The commands bound to a workspace: they take `-C`. `interactive` is tern without a command;
 * `tern acp` works where the editor says, `tern demo` in a folder of its own.
 */
const WORKSPACE_COMMANDS = [
  "interactive",
  "run",
  "plan",
  "config",
  "sandbox",
  "audit",
  "doctor",
  "models",
  "sessions",
  "hooks",
  "mcp",
  "index",
  "search",
  "context",
  "memory",
  "rpc",
];

/**
 * The commands that load the configuration: they take the configuration keys' options. `child`
 * is given `--base-url` by its parent (its launcher grants that host).
 */
const CONFIG_COMMANDS = [...WORKSPACE_COMMANDS, "acp", "child"];

/** The commands that continue a session: they take `-c` and `-r` (`sessions` actions: `-c`). */
const SESSION_COMMANDS = ["interactive", "run", "plan", "rpc"];

/** The commands that print JSON with `--json`. */
const JSON_COMMANDS = [
  "audit",
  "context",
  "hooks",
  "mcp",
  "memory",
  "models",
  "search",
  "sessions",
];

/** Options listed before the configuration keys' options in the help. */
const LEADING: readonly CliOption[] = [
  {
    name: "once",
    short: "p",
    type: "string",
    arg: "<task>",
    commands: ["run"],
    shared: true,
    help: "run one task non-interactively (same as `tern run`)",
  },
  {
    name: "cwd",
    short: "C",
    type: "string",
    arg: "<dir>",
    commands: WORKSPACE_COMMANDS,
    shared: true,
    help: "workspace directory (default: the current directory)",
  },
];

/** Options listed after the configuration keys' options, then those of single commands. */
const TRAILING: readonly CliOption[] = [
  {
    name: "image",
    type: "string",
    multiple: true,
    arg: "<file>",
    commands: ["run"],
    help: "tern run: attach a workspace image to the task (PNG, JPEG, GIF, WebP; repeatable)",
  },
  {
    name: "output",
    short: "o",
    type: "string",
    arg: "<format>",
    commands: ["run", "plan", "sandbox"],
    shared: true,
    help: "text (default), json (one final object) or stream-json (events)",
  },
  {
    name: "raw",
    type: "boolean",
    commands: ["run"],
    shared: true,
    help: "text output: the answer exactly as the model wrote it, escape sequences included " +
      "(for pipes; by default they are removed)",
  },
  {
    name: "continue",
    short: "c",
    type: "boolean",
    commands: [
      ...SESSION_COMMANDS,
      ...["show", "tree", "fork", "export", "compact", "rewind"].map((a) => `sessions ${a}`),
    ],
    shared: true,
    help: "continue the newest session of this directory",
  },
  {
    name: "resume",
    short: "r",
    type: "string",
    arg: "[id]",
    commands: SESSION_COMMANDS,
    shared: true,
    help: "continue a session by id, id prefix or path (interactive, at a terminal: a picker " +
      "without an id)",
  },
  {
    name: "from",
    type: "string",
    arg: "<entry>",
    commands: ["interactive", "run", "rpc"],
    shared: true,
    help: "with --continue or --resume: continue from that entry of the session (a new " +
      "branch; see `tern sessions tree`)",
  },
  { name: "version", short: "V", type: "boolean", help: "print the version" },
  { name: "help", short: "h", type: "boolean", help: "print this help" },
  { name: "plan", type: "string", commands: ["plan"] },
  { name: "append", type: "string", commands: ["plan"] },
  { name: "concurrency", type: "string", commands: ["plan"] },
  { name: "demo", type: "boolean", commands: ["demo"] },
  { name: "offline", type: "boolean", commands: ["models"] },
  { name: "json", type: "boolean", commands: JSON_COMMANDS },
  { name: "all", type: "boolean", commands: ["models", "sessions list"] },
  { name: "focus", type: "string", commands: ["sessions compact"] },
  { name: "restore", type: "string", commands: ["sessions rewind"] },
  { name: "yes", type: "boolean", commands: ["sessions rewind"] },
  { name: "conflicts", type: "string", commands: ["sessions rewind"] },
  { name: "limit", type: "string", commands: ["search"] },
  { name: "explain", type: "boolean", commands: ["search"] },
  { name: "skill", type: "string", commands: ["run"] },
  { name: "global", type: "boolean", commands: ["memory save"] },
];

/** Every option: the command line's own and one per configuration key with a flag. */
export const ALL_OPTIONS: readonly CliOption[] = [
  ...LEADING,
  ...FLAG_KEYS.map((key): CliOption => {
    const { rule, flag } = settingOf(key);
    const type = rule.kind === "boolean" ? "boolean" : "string";
    return { ...flag!, type, commands: CONFIG_COMMANDS, shared: true };
  }),
  ...TRAILING,
];

const NAME_WIDTH = 25;
const PARAGRAPH_WIDTH = 91;

/** Every variable of the settings table, in table order. */
const SETTING_VARIABLES = SETTING_KEYS.flatMap((key) => settingOf(key).env ?? []);

/** `text` as lines of at most `width` characters, broken at spaces. */
function wrap(text: string, width: number): string {
  const lines = [""];
  for (const word of text.split(" ")) {
    const last = lines.length - 1;
    if (lines[last] !== "" && lines[last].length + 1 + word.length > width) lines.push(word);
    else lines[last] = lines[last] === "" ? word : `${lines[last]} ${word}`;
  }
  return lines.join("\n");
}
const LINE_WIDTH = 87;

/** `  -m, --model <name>     model name …`, wrapped under its description column. */
function optionLines(option: CliOption): string {
  const name = `  ${option.short ? `-${option.short}, ` : "    "}--${option.name}` +
    (option.arg ? ` ${option.arg}` : "");
  const lines = name.length < NAME_WIDTH ? [name.padEnd(NAME_WIDTH)] : [name, ""];
  for (const word of (option.help ?? "").split(" ")) {
    const line = lines[lines.length - 1].padEnd(NAME_WIDTH);
    if (line.length > NAME_WIDTH && line.length + word.length > LINE_WIDTH) {
      lines.push(" ".repeat(NAME_WIDTH) + word);
    } else {
      lines[lines.length - 1] = line + (line.length > NAME_WIDTH ? " " : "") + word;
    }
  }
  return lines.join("\n");
}

/**
 * The "Options:" section of the help: every option that has a help line, in order; with
 * `command`, only those that command (or one of its actions) owns.
 */
export function optionsHelp(command?: string): string {
  const owned = (option: CliOption) =>
    command === undefined ||
    (!option.shared &&
      (option.commands ?? []).some((name) => name === command || name.startsWith(`${command} `)));
  return ALL_OPTIONS.filter((option) => option.help && owned(option)).map(optionLines).join("\n");
}

/**
 * The "Environment:" paragraph: the key variables, tern's own, and every variable of the
 * settings table, wrapped.
 */
export function environmentHelp(): string {
  return wrap(
    "Environment: TERN_API_KEY (the chosen provider's key; else OPENAI_API_KEY, " +
      "ANTHROPIC_API_KEY or OPENROUTER_API_KEY by provider), TERN_HOME (default ~/.tern), " +
      "TERN_EXTRA_ENV (more variables tern may read: key variables a setting names, ${VAR} in " +
      "MCP server definitions), " +
      "TERN_EXTRA_HOSTS (more hosts tern may connect to: it reaches only those of URLs in its " +
      `config, environment and command line), and for settings ${
        SETTING_VARIABLES.join(", ")
      }; see ` +
      ".env.example. Config files: ~/.tern/config.jsonc and <project>/.tern/config.jsonc; MCP " +
      "servers: ~/.tern/mcp.json, ~/.tern/mcp/*.json, .mcp.json, .tern/mcp.json, " +
      ".tern/mcp/*.json.",
    PARAGRAPH_WIDTH,
  );
}
