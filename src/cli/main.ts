/**
 * The composition root of the command line: parses argv and dispatches to a front end. Front
 * ends are imported lazily so each command loads only what it uses.
 */
import { versionLine } from "../version.ts";
import { parseInShellParserProcess } from "../sandbox/shell/parse_place.ts";
import { TernError } from "../core/errors.ts";
import { terminalText, visibleText } from "../core/terminal_text.ts";
import {
  commandHelpText,
  type CommandLine,
  helpText,
  parseCommandLine,
  type TurnOptions,
} from "./args.ts";
import { checkDirPath, currentDir } from "./current_dir.ts";
import { writingOutput } from "./errors.ts";
import type { RunFlags } from "./run.ts";

/**
 * Says once, on stderr, before any front end draws, that tern runs as root and what keeps
 * commands from being host root (`tern doctor` says which layers apply here).
 */
function noticeRoot(): void {
  if (Deno.uid() !== 0) return;
  console.error(
    "tern: running as root: sandboxed commands run as uid 0 without capabilities, under a " +
      "seccomp filter, with /proc/sys and /sys read-only and root-only host files hidden " +
      "(tern doctor shows what applies here)",
  );
}

/** Runs the CLI with `args` (without the program name) and returns the exit code. */
export async function main(args: string[]): Promise<number> {
  parseInShellParserProcess();
  try {
    return await dispatch(parseCommandLine(args));
  } catch (error) {
    return await reportError(error);
  }
}

async function dispatch(line: CommandLine): Promise<number> {
  if (["run", "plan", "interactive"].includes(line.command)) noticeRoot();
  switch (line.command) {
    case "help":
      printLine((line.topic ? commandHelpText(line.topic) : helpText()).trimEnd());
      return 0;
    case "version":
      printLine(versionLine());
      return 0;
    case "completions": {
      const { completionScript } = await import("./completions.ts");
      printLine(completionScript(line.shell).trimEnd());
      return 0;
    }
    case "run": {
      const { runOnce } = await import("./run.ts");
      return await runOnce(line.task, {
        ...toRunFlags(line.options),
        skill: line.skill,
        images: line.images,
      });
    }
    case "plan": {
      const { runPlanCommand } = await import("./plan.ts");
      return await runPlanCommand(line, toRunFlags(line.options));
    }
    case "demo": {
      const { runDemo } = await import("./demo.ts");
      return await runDemo();
    }
    case "config": {
      const { showConfig } = await import("./config.ts");
      return await showConfig(toRunFlags(line.options));
    }
    case "sandbox-explain": {
      const { explainSandbox } = await import("./sandbox.ts");
      return await explainSandbox(toRunFlags(line.options));
    }
    case "sandbox-check": {
      const { checkSandbox } = await import("./sandbox.ts");
      return await checkSandbox(line.call, toRunFlags(line.options));
    }
    case "audit": {
      const [{ showAudit }, { loadConfig }, { processWriters }] = await Promise.all([
        import("./audit.ts"),
        import("../config/mod.ts"),
        import("./process_env.ts"),
      ]);
      const flags = toRunFlags(line.options);
      const { config } = await loadConfig({ cwd: flags.cwd, flags: flags.config });
      return await showAudit({
        ternHome: config.ternHome,
        session: line.session,
        cwd: flags.cwd,
        json: line.json,
        write: processWriters().out,
      });
    }
    case "sessions": {
      const { runSessionsCommand } = await import("./sessions.ts");
      return await runSessionsCommand(line, toRunFlags(line.options));
    }
    case "models": {
      const { listModels } = await import("./models.ts");
      return await listModels(line, toRunFlags(line.options));
    }
    case "hooks": {
      const { runHooksCommand } = await import("./hooks.ts");
      return await runHooksCommand(line, toRunFlags(line.options));
    }
    case "mcp": {
      const { runMcpCommand } = await import("./mcp.ts");
      return await runMcpCommand(line, toRunFlags(line.options));
    }
    case "index": {
      const { runIndexCommand } = await import("./code_index.ts");
      return await runIndexCommand(line, toRunFlags(line.options));
    }
    case "search": {
      const { runSearchCommand } = await import("./code_index.ts");
      return await runSearchCommand(line, toRunFlags(line.options));
    }
    case "memory": {
      const { runMemoryCommand } = await import("./memory.ts");
      return await runMemoryCommand(line, toRunFlags(line.options));
    }
    case "context": {
      const { showContext } = await import("./context.ts");
      return await showContext(line.task, line.json, toRunFlags(line.options));
    }
    case "doctor": {
      const { runDoctor } = await import("./doctor.ts");
      return await runDoctor(toRunFlags(line.options));
    }
    case "rpc": {
      const { runRpc } = await import("./rpc/server.ts");
      return await runRpc(toRunFlags(line.options));
    }
    case "acp": {
      const { runAcp } = await import("./acp/server.ts");
      return await runAcp(toRunFlags(line.options));
    }
    case "child": {
      const { runChild } = await import("./child.ts");
      return await runChild();
    }
    case "interactive": {
      const { runInteractive } = await import("./interactive/start.ts");
      return await runInteractive(toRunFlags(line.options));
    }
  }
}

/** `text` and a newline on stdout. @throws {OutputError} when stdout refuses it. */
function printLine(text: string): void {
  writingOutput(() => console.log(text));
}

function toRunFlags(options: TurnOptions): RunFlags {
  return {
    cwd: options.cwd === undefined ? currentDir() : checkDirPath(options.cwd),
    output: options.output,
    raw: options.raw,
    session: { continue: options.continue, resume: options.resume, from: options.from },
    config: options.settings,
  };
}

/**
 * Prints `error` and returns the exit code `exit_codes.ts` gives it. A broken pipe is the reader
 * of tern's output gone (`tern … | head`): like the writers of `process_env.ts`, which carry on,
 * a write that gave up on it ends the command quietly, as a success.
 */
async function reportError(error: unknown): Promise<number> {
  if (error instanceof Deno.errors.BrokenPipe) return 0;
  // Imported only on this path: the mapping names every domain's error classes.
  const { EXIT_FAILURE, exitCodeForError } = await import("./exit_codes.ts");
  const spawn = missingProgram(error);
  if (spawn !== undefined) {
    console.error(`tern: ${errorText(spawn)}`);
    return EXIT_FAILURE;
  }
  const refused = fileRefusal(error);
  if (refused !== undefined) {
    console.error(`tern: ${errorText(refused)}`);
    return EXIT_FAILURE;
  }
  if (error instanceof TernError) {
    console.error(`tern: ${errorText(error.message)}`);
    return exitCodeForError(error);
  }
  // An error's text can quote a server, a file or the model: made safe like theirs.
  const detail = error instanceof Error ? error.stack ?? error.message : String(error);
  console.error(`tern: internal error: ${errorText(detail)}`);
  return EXIT_FAILURE;
}

/**
 * An error's text made safe for a terminal, its lines after the first indented: a name it
 * quotes (a file's, a value's) may hold a line break, and a line of it at column 0 could pass
 * for one of tern's own (`tern: …`, `✓ …`).
 */
function errorText(text: string): string {
  return terminalText(text).replace(/\n(?=.)/g, "\n  ");
}

/**
 * What to say when `error` is a program tern starts on the host that cannot be started
 * (`Deno.errors.NotFound` "Failed to spawn 'git': …", as a spawn or `hostProgram()` throws it);
 * undefined for any other error.
 */
function missingProgram(error: unknown): string | undefined {
  if (!(error instanceof Deno.errors.NotFound)) return undefined;
  const spawn = /^Failed to spawn '([^']*)': ([^\n]*)/.exec(error.message);
  if (spawn === null) return undefined;
  const why = spawn[2] === "entity not found" || /No such file/.test(spawn[2])
    ? "it is not installed, or not in a folder of PATH outside the workspace"
    : spawn[2];
  return `Cannot start the program "${spawn[1]}": ${why}`;
}

/** Deno's names of file operations, as a person says them. */
const FILE_OPERATIONS: Record<string, string> = {
  mkdir: "create the folder",
  open: "open",
  readdir: "read the folder",
  rename: "rename",
  remove: "remove",
  copy: "copy",
  link: "link",
  symlink: "make the link",
  chmod: "change the mode of",
  truncate: "truncate",
  realpath: "resolve",
  stat: "inspect",
  lstat: "inspect",
};

/**
 * What to say when `error` is the system refusing a file operation that no command turned into
 * a message of its own (Deno's "Operation not permitted (os error 1): mkdir '/x/sessions'": a
 * TERN_HOME that cannot be written, a full disk): the operation, the path and the reason,
 * with no stack trace; undefined for any other error.
 */
function fileRefusal(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const refused = /^([^\n]+) \(os error \d+\): (\w+) '(.*?)'(?: -> '(.*)')?$/s.exec(
    error.message,
  );
  if (refused === null) return undefined;
  const [, reason, operation, path, to] = refused;
  const what = FILE_OPERATIONS[operation] ?? operation;
  const refusal = error instanceof Deno.errors.PermissionDenied ||
    /read-only|no space|quota/i.test(reason);
  const hint = refusal
    ? "; give tern write access there (with free space), or set TERN_HOME to a folder it can " +
      "write for tern's own files (default ~/.tern)"
    : "";
  const target = to === undefined ? "" : ` to "${visibleText(to)}"`;
  return `Cannot ${what} "${visibleText(path)}"${target}: ${reason.toLowerCase()}${hint}`;
}
