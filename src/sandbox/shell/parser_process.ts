/**
 * The shell parser process: tern's analysis of a command line that is not plain (parse.ts)
 * runs tree-sitter in a Deno process of its own (parser_main.ts), never in tern's. So its
 * memory (the wasm runtime, the grammar compiled, its heap: about 19 MB) is not tern's, a
 * parse that outruns its deadline is killed rather than waited for (tree-sitter checks its
 * deadline only between steps), and tern's main thread (the terminal, Ctrl-C, a stream)
 * goes on while a command is parsed. The process may read nothing but the grammar; it starts
 * at the first command that needs it and stays for the next ones.
 */
import { fileUrlToPath } from "../../core/file_url.ts";
import { JsonLineProcess } from "../../core/json_line_process.ts";
import { entryArgv, packaging } from "../../core/packaging.ts";
import { sourceUrl } from "../../core/source_url.ts";
import * as z from "../../core/zod.ts";
import { defaultConfigPath } from "../worker/flags.ts";
import { overBudget, type ShellAnalysis } from "./_analysis.ts";

/** What the shell parser process is sent: one command line to analyse, numbered. */
export interface ShellParseRequest {
  id: number;
  command: string;
  budgetMs: number;
}

/**
 * What the shell parser process prints, one JSON line each: `ready` once it has loaded, then
 * per command its analysis with the request's `id`; `last` when it ends after this answer.
 */
export type ShellParseAnswer =
  | { ready: true }
  | { id: number; analysis: ShellAnalysis; last?: true };

const strings = z.array(z.string());
/**
 * An answer as the permission gate may trust it: the shape of a ShellAnalysis, checked, since a
 * line out of form (or one a bug put out of step) must refuse the command, never let it pass.
 */
const ANSWER = z.object({
  id: z.number(),
  analysis: z.discriminatedUnion("ok", [
    z.object({
      ok: z.literal(true),
      commands: z.array(z.object({
        argv: strings,
        expands: z.array(z.boolean()),
        assignments: strings,
        redirects: z.array(z.object({ op: z.string(), target: z.string() })),
        wrappers: strings,
        chdir: z.boolean(),
        text: z.string(),
        inSubstitution: z.boolean(),
      })),
      opaque: strings,
      unseen: strings,
    }),
    z.object({ ok: z.literal(false), error: z.string() }),
  ]),
  last: z.literal(true).optional(),
});

/** Time an answer may take beyond the parse's budget: the walk, hidden code's own parses. */
const ANSWER_MARGIN_MS = 2_000;
/** Time the process may take to start and load tree-sitter. */
const START_MS = 30_000;
/** After the process failed to start, commands are refused at once this long. */
const START_RETRY_MS = 10_000;
/** The process's JavaScript heap at most, in MiB (tree-sitter's memory is capped apart). */
const HEAP_MB = 128;
/**
 * The longest command sent, in characters; a longer one is refused here, not copied to the
 * process to outrun its budget there. No command that long runs: bash gets it as one argument,
 * which Linux caps at 128 KiB.
 */
const MAX_COMMAND_CHARS = 4 * 1024 * 1024;
/**
 * The longest answer line read, in characters: twice what the process sends at most
 * (parser_main.ts), so that a process gone wrong cannot make tern hold more.
 */
const MAX_ANSWER_CHARS = 16 * 1024 * 1024;

type Running = JsonLineProcess<ShellParseRequest, ShellParseAnswer>;

/**
 * The argv of the shell parser process: no access but reading tern's `node_modules` (the
 * grammar's wasm) in a source tree, none in a packaged build (which carries it). Its wasm runs
 * in V8's baseline compiler only: tiered up, the grammar's largest function took an 84 MB
 * compile zone.
 */
export function shellParserArgv(
  denoPath = Deno.execPath(),
  configPath: string | null = defaultConfigPath(),
): string[] {
  const grammar = packaging().kind === "tree"
    ? [`--allow-read=${fileUrlToPath(sourceUrl("node_modules"))}`]
    : [];
  return entryArgv(
    "shell-parser",
    [
      "--no-prompt",
      "--quiet",
      "--cached-only",
      "--no-remote",
      ...(configPath === null ? ["--no-config", "--no-lock"] : ["--config", configPath]),
      `--v8-flags=--max-old-space-size=${HEAP_MB},--liftoff-only`,
      ...grammar,
    ],
    [],
    denoPath,
  );
}

/**
 * Analyses command lines as parse.ts's analyzeShellHere() does, in the shell parser process:
 * one at a time, in the order asked, the process started at the first and again after one
 * ended. It never keeps tern running. Close it when done.
 */
export class ShellParserProcess {
  #argv: () => string[];
  #running: Promise<Running> | undefined;
  #turn: Promise<unknown> = Promise.resolve();
  #startFailed: { until: number; why: string } | undefined;
  #asked = 0;
  #closed = false;

  /** `argv`: how to start the process (default shellParserArgv()). */
  constructor(argv: () => string[] = () => shellParserArgv()) {
    this.#argv = argv;
  }

  /**
   * The analysis of `command`. Never throws: a parse past `budgetMs`, a process that ends,
   * cannot start or answers out of turn or form, and a parser closed come back as `{ok: false}`
   * saying so (the command is then refused as unparsable).
   */
  analyze(command: string, budgetMs: number): Promise<ShellAnalysis> {
    const answer = this.#turn.then(() => this.#analyze(command, budgetMs)).catch((error) => ({
      ok: false as const,
      error: `Cannot parse shell command: ${why(error)}`,
    }));
    this.#turn = answer;
    return answer;
  }

  /**
   * Ends the process and waits for it to end. Every command asked after, or still waiting, is
   * refused: none starts another process.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const running = await this.#running?.catch(() => undefined);
    this.#running = undefined;
    await running?.end();
  }

  async #analyze(command: string, budgetMs: number, again = true): Promise<ShellAnalysis> {
    if (command.length > MAX_COMMAND_CHARS) {
      return {
        ok: false,
        error: `Cannot parse shell command: it is ${command.length} characters long, more than ` +
          `the ${MAX_COMMAND_CHARS} the shell parser takes; split it into smaller commands`,
      };
    }
    let process: Running;
    try {
      process = await this.#process();
    } catch (error) {
      return { ok: false, error: `Cannot parse shell command: ${why(error)}` };
    }
    const id = ++this.#asked;
    const answer = await process.ask({ id, command, budgetMs }, budgetMs + ANSWER_MARGIN_MS);
    const read = typeof answer === "string" ? undefined : ANSWER.safeParse(answer).data;
    if (read === undefined || read.id !== id || read.last) {
      this.#running = undefined;
      await process.end();
    }
    if (answer === "overdue") return overBudget(budgetMs);
    // It may have ended before it was asked (killed while idle): a new one is asked once more.
    if (answer === "ended" && again) return await this.#analyze(command, budgetMs, false);
    if (answer === "ended") {
      return {
        ok: false,
        error: "Cannot parse shell command: the shell parser process ended while parsing it; " +
          "split the command into smaller ones",
      };
    }
    if (read?.id === id) return read.analysis;
    return {
      ok: false,
      error: "Cannot parse shell command: the shell parser process answered out of turn or " +
        "out of form; it was stopped, and the next command starts another",
    };
  }

  #process(): Promise<Running> {
    if (this.#closed) return Promise.reject(new Error("the shell parser was closed"));
    if (this.#running) return this.#running;
    if (this.#startFailed !== undefined && performance.now() < this.#startFailed.until) {
      return Promise.reject(new Error(this.#startFailed.why));
    }
    const starting = JsonLineProcess.start<ShellParseRequest, ShellParseAnswer>(
      this.#argv(),
      START_MS,
      { maxLineChars: MAX_ANSWER_CHARS },
    ).then((running) => {
      this.#startFailed = undefined;
      return running;
    }, (error) => {
      const message = `the shell parser process did not start: ${why(error)}`;
      this.#startFailed = { until: performance.now() + START_RETRY_MS, why: message };
      if (this.#running === starting) this.#running = undefined;
      throw new Error(message, { cause: error });
    });
    this.#running = starting;
    return starting;
  }
}

let shared: ShellParserProcess | undefined;

/** The process's one shell parser process (started at its first command). */
export function shellParserProcess(): ShellParserProcess {
  shared ??= new ShellParserProcess();
  return shared;
}

function why(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
