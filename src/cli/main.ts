/**
 * The composition root of the command line: parses argv and dispatches to a front end. Front
 * ends are imported lazily so each command loads only what it uses.
 */
import { VERSION } from "../version.ts";
import { TernError } from "../core/errors.ts";
import { type CommandLine, HELP, parseCommandLine, type TurnOptions } from "./args.ts";
import { EXIT_INTERNAL, EXIT_USAGE } from "./exit_codes.ts";
import type { RunFlags } from "./run.ts";

/** Runs the CLI with `args` (without the program name) and returns the exit code. */
export async function main(args: string[]): Promise<number> {
  try {
    return await dispatch(parseCommandLine(args));
  } catch (error) {
    return reportError(error);
  }
}

async function dispatch(line: CommandLine): Promise<number> {
  switch (line.command) {
    case "help":
      console.log(HELP.trimEnd());
      return 0;
    case "version":
      console.log(`tern ${VERSION}`);
      return 0;
    case "run": {
      const { runOnce } = await import("./run.ts");
      return await runOnce(line.task, toRunFlags(line.options));
    }
    case "demo": {
      const { runDemo } = await import("./demo.ts");
      return await runDemo();
    }
    case "config": {
      const { showConfig } = await import("./config.ts");
      return await showConfig(toRunFlags(line.options));
    }
    case "interactive":
      console.error(HELP.trimEnd());
      console.error('\ntern: the interactive UI is not built yet; give a task: tern run "task"');
      return EXIT_USAGE;
  }
}

function toRunFlags(options: TurnOptions): RunFlags {
  return {
    cwd: options.cwd ?? Deno.cwd(),
    output: options.output,
    config: {
      model: options.model,
      baseUrl: options.baseUrl,
      maxRounds: options.maxRounds,
      maxTokens: options.maxTokens,
      temperature: options.temperature,
    },
  };
}

function reportError(error: unknown): number {
  if (error instanceof TernError) {
    console.error(`tern: ${error.message}`);
    return error.exitCode;
  }
  console.error(`tern: internal error: ${error instanceof Error ? error.stack : String(error)}`);
  return EXIT_INTERNAL;
}
