/**
 * The composition root of the command line: parses argv with commander and dispatches to a
 * front end. Front ends are imported lazily so each command loads only what it uses.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "@commander-js/extra-typings";
import { VERSION } from "../version.ts";
import { TernError } from "../core/errors.ts";
import { EXIT_INTERNAL, EXIT_USAGE } from "./exit_codes.ts";
import type { OutputFormat, RunFlags } from "./run.ts";

/** Runs the CLI with `args` (without the program name) and returns the exit code. */
export async function main(args: string[]): Promise<number> {
  let exitCode = 0;
  const program = buildProgram((code) => exitCode = code);
  try {
    await program.parseAsync(args, { from: "user" });
    return exitCode;
  } catch (error) {
    return reportError(error);
  }
}

function buildProgram(setExit: (code: number) => void) {
  const program = addRunOptions(
    new Command("tern")
      .description(
        "A terminal coding agent: reads and searches your code, edits files and runs commands.\n" +
          "Without a command, tern runs the task given with -p (interactive mode is coming).",
      )
      .version(`tern ${VERSION}`, "-V, --version", "print the version")
      .option("-p, --once <task>", "run one task non-interactively (same as `tern run`)")
      .option("--demo", "run the offline demo (same as `tern demo`)")
      .enablePositionalOptions()
      .showHelpAfterError("(run `tern --help` for usage)")
      .exitOverride(),
  ).action(async (opts) => {
    if (opts.demo) return setExit(await runDemo());
    if (opts.once !== undefined) return setExit(await runTask(opts.once, opts));
    program.outputHelp();
    console.error(
      "\ntern: the interactive UI is not built yet; give a task with `tern run \"task\"`",
    );
    setExit(EXIT_USAGE);
  });

  addRunOptions(
    program.command("run")
      .description("run one task to completion and exit (aliases: -p, --once)")
      .argument("<task...>", "what to do, in plain words")
      .exitOverride(),
  ).action(async (task, opts) => setExit(await runTask(task.join(" "), opts)));

  program.command("demo")
    .description("run the real agent loop and tools against a built-in scripted model, offline")
    .exitOverride()
    .action(async () => setExit(await runDemo()));

  addRunOptions(
    program.command("config")
      .description("print the effective configuration and where each value came from")
      .exitOverride(),
  ).action(async (opts) => {
    const { showConfig } = await import("./config.ts");
    setExit(await showConfig(toRunFlags(opts)));
  });

  return program;
}

function addRunOptions<T extends Command<[], Record<string, unknown>>>(command: T) {
  return command
    .option("-C, --cwd <dir>", "workspace directory (default: the current directory)")
    .option("-m, --model <name>", "model name")
    .option("--base-url <url>", "OpenAI-compatible API base URL")
    .option("--max-rounds <n>", "model calls allowed per turn (default 25)", positiveInt)
    .option("--max-tokens <n>", "output token limit per model call", positiveInt)
    .option("--temperature <t>", "sampling temperature, 0 to 2", parseFloat)
    .addOption(
      new Option("-o, --output <format>", "output format")
        .choices(["text", "json", "stream-json"] as const)
        .default("text" as const),
    );
}

type ParsedRunOptions = {
  cwd?: string;
  model?: string;
  baseUrl?: string;
  maxRounds?: number;
  maxTokens?: number;
  temperature?: number;
  output: OutputFormat;
};

function toRunFlags(opts: ParsedRunOptions): RunFlags {
  return {
    cwd: opts.cwd ?? Deno.cwd(),
    output: opts.output,
    config: {
      model: opts.model,
      baseUrl: opts.baseUrl,
      maxRounds: opts.maxRounds,
      maxTokens: opts.maxTokens,
      temperature: opts.temperature,
    },
  };
}

async function runTask(task: string, opts: ParsedRunOptions): Promise<number> {
  if (task.trim() === "") throw new UsageError("The task is empty: say what tern should do");
  const { runOnce } = await import("./run.ts");
  return await runOnce(task, toRunFlags(opts));
}

async function runDemo(): Promise<number> {
  const { runDemo } = await import("./demo.ts");
  return await runDemo();
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError(`expected a positive integer, got "${value}"`);
  }
  return n;
}

class UsageError extends TernError {
  override name = "UsageError";
  override exitCode = EXIT_USAGE;
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Help and version output end in a CommanderError too; they are successes.
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return 0;
    if (error.code === "commander.help") return 0;
    return EXIT_USAGE;
  }
  if (error instanceof TernError) {
    console.error(`tern: ${error.message}`);
    return error.exitCode;
  }
  console.error(`tern: internal error: ${error instanceof Error ? error.stack : String(error)}`);
  return EXIT_INTERNAL;
}
