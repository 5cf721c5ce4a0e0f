/**
 * The command line: `node:util` parseArgs (built in, nearly free at start-up) plus the help
 * text. Turns argv into one `CommandLine` value or throws a UsageError (exit code 2).
 */
import { parseArgs } from "node:util";
import { TernError } from "../core/errors.ts";
import { EXIT_USAGE } from "./exit_codes.ts";

export type OutputFormat = "text" | "json" | "stream-json";

/** Options shared by every command that runs or configures a turn. */
export interface TurnOptions {
  cwd?: string;
  model?: string;
  baseUrl?: string;
  maxRounds?: number;
  maxTokens?: number;
  temperature?: number;
  output: OutputFormat;
}

export type CommandLine =
  | { command: "run"; task: string; options: TurnOptions }
  | { command: "demo" }
  | { command: "config"; options: TurnOptions }
  | { command: "help" }
  | { command: "version" }
  | { command: "interactive"; options: TurnOptions };

/** Wrong usage of the command line; the message says what was wrong and how to fix it. */
export class UsageError extends TernError {
  override name = "UsageError";
  constructor(message: string) {
    super(`${message} (run \`tern --help\` for usage)`, { exitCode: EXIT_USAGE });
  }
}

export const HELP = `Usage: tern [command] [options]

A terminal coding agent: reads and searches your code, edits files and runs commands.

Commands:
  run <task...>          run one task to completion and exit (also: -p, --once <task>)
  demo                   run the real agent loop and tools against a built-in scripted
                         model, offline (also: --demo)
  config                 print the effective configuration and where each value came from
  help                   print this help

Options:
  -p, --once <task>      run one task non-interactively (same as \`tern run\`)
  -C, --cwd <dir>        workspace directory (default: the current directory)
  -m, --model <name>     model name
      --base-url <url>   OpenAI-compatible API base URL
      --max-rounds <n>   model calls allowed per turn (default 25)
      --max-tokens <n>   output token limit per model call
      --temperature <t>  sampling temperature, 0 to 2
  -o, --output <format>  text (default), json (one final object) or stream-json (events)
  -V, --version          print the version
  -h, --help             print this help

Environment: TERN_API_KEY (or OPENAI_API_KEY), TERN_BASE_URL, TERN_MODEL, TERN_MAX_ROUNDS,
TERN_HOME (default ~/.tern); see .env.example. Config files: ~/.tern/config.jsonc and
<project>/.tern/config.jsonc.

Exit codes: 0 completed, 2 usage or config error, 3 MAX_ROUNDS, 4 REPEATED_FAILURE,
5 EMPTY_RESPONSE, 6 LENGTH_LIMIT, 7 CLIENT_ERROR, 130 CANCELLED.
`;

const OPTIONS = {
  once: { type: "string", short: "p" },
  demo: { type: "boolean" },
  cwd: { type: "string", short: "C" },
  model: { type: "string", short: "m" },
  "base-url": { type: "string" },
  "max-rounds": { type: "string" },
  "max-tokens": { type: "string" },
  temperature: { type: "string" },
  output: { type: "string", short: "o" },
  version: { type: "boolean", short: "V" },
  help: { type: "boolean", short: "h" },
} as const;

const COMMANDS = new Set(["run", "demo", "config", "help"]);
const OUTPUTS: readonly OutputFormat[] = ["text", "json", "stream-json"];

/** Parses argv (without the program name). @throws {UsageError} */
export function parseCommandLine(args: string[]): CommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
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
  if (first === "config") {
    if (rest.length > 0) {
      throw new UsageError(`Unexpected arguments after config: "${rest.join(" ")}"`);
    }
    return { command: "config", options };
  }
  if (first !== undefined && !COMMANDS.has(first)) {
    throw new UsageError(`Unknown command "${first}": to run a task, use tern run "${first} …"`);
  }
  return { command: "interactive", options };
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
    maxRounds: positiveInt("--max-rounds", values["max-rounds"]),
    maxTokens: positiveInt("--max-tokens", values["max-tokens"]),
    temperature: number("--temperature", values.temperature),
    output: output as OutputFormat,
  };
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
