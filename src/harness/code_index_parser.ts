/**
 * The code index's parser process: tree-sitter parses the repository's files in a Deno process
 * of its own (code_index_parser_main.ts), never in tern's. Crafted source makes a parse run for
 * seconds to minutes and take gigabytes (24 KB of Java took 9 s and 1.8 GB), and neither
 * tree-sitter's own deadline (checked only between its steps, and one step can take that long)
 * nor ending a Worker thread (Deno does not stop one busy in wasm) stops it in a process one
 * shares. This one is killed when a file outruns its deadline; the file is cut into line windows
 * with a note naming it (the index keeps it so, by its hash, until it changes), and the next
 * file starts a new process. The process may read nothing but the grammars, and tree-sitter's
 * memory there is capped (_grammars.ts).
 */
import { JsonLineProcess } from "../core/json_line_process.ts";
import { fileUrlToPath } from "../core/file_url.ts";
import { entryArgv, packaging } from "../core/packaging.ts";
import { sourceUrl } from "../core/source_url.ts";
import {
  chunkFile,
  parseDeadlineMs,
  parses,
  seconds,
  sha256,
  windowedFile,
} from "../index/chunker.ts";
import type { ChunkedFile } from "../index/types.ts";
import { defaultConfigPath } from "../sandbox/worker/flags.ts";

/** What the parser process is sent: one file to chunk. */
export interface ParserRequest {
  path: string;
  text: string;
  hash: string;
}

/**
 * What the parser process prints, one JSON line each: `ready` once it has loaded, then per file
 * the file chunked or why it could not be; `last` when it ends after this answer.
 */
export type ParserAnswer =
  | { ready: true }
  | { chunked: ChunkedFile; last?: true }
  | { error: string; last: true };

/**
 * Time a file's answer may take beyond its parse deadline (parseDeadlineMs()): loading the
 * grammar at a language's first file, walking the tree, sending the chunks.
 */
const ANSWER_MARGIN_MS = 2_000;
/** One running parser process. */
type Running = JsonLineProcess<ParserRequest, ParserAnswer>;

/** Time the process may take to start and load tree-sitter. */
const START_MS = 30_000;
/** After the process failed to start, chunk() fails at once this long before it tries again. */
const START_RETRY_MS = 60_000;
/** The process's JavaScript heap at most, in MiB (tree-sitter's memory is capped apart). */
const HEAP_MB = 256;
/**
 * The longest answer line read, in characters: a file of at most 1 MiB (INDEX_FILE_MAX_BYTES)
 * chunked, with its JSON escapes, is far less; a process gone wrong cannot make tern hold more.
 */
const MAX_ANSWER_CHARS = 64 * 1024 * 1024;
/** An idle process ends after this long: its memory is given back between searches. */
const IDLE_MS = 30_000;

/**
 * The argv of the parser process: no access but reading tern's `node_modules` (the grammars'
 * wasm) in a source tree, and none at all in a packaged build, which carries them (a compiled
 * binary runs with its own permissions: the process gives them up when it starts).
 */
export function parserArgv(
  denoPath = Deno.execPath(),
  configPath: string | null = defaultConfigPath(),
): string[] {
  const grammars = packaging().kind === "tree"
    ? [`--allow-read=${fileUrlToPath(sourceUrl("node_modules"))}`]
    : [];
  return entryArgv(
    "index-parser",
    [
      "--no-prompt",
      "--quiet",
      "--cached-only",
      "--no-remote",
      ...(configPath === null ? ["--no-config", "--no-lock"] : ["--config", configPath]),
      `--v8-flags=--max-old-space-size=${HEAP_MB}`,
      ...grammars,
    ],
    [],
    denoPath,
  );
}

/**
 * Chunks files as chunkFile() does, parsing in the parser process: one file at a time, in the
 * order asked, the process started at the first file that needs it and again after one ended.
 * The next file is sent as soon as one is answered, before its caller goes on: the caller's work
 * on one file runs while the process parses the next. It ends after {@link IDLE_MS} without a
 * file, and never keeps tern running. Close it when done.
 */
export class ParserProcess {
  #argv: () => string[];
  #running: Running | undefined;
  #starting: Promise<Running> | undefined;
  #startFailed: { until: number; why: string } | undefined;
  #waiting: {
    request: ParserRequest;
    resolve: (chunked: ChunkedFile) => void;
    reject: (error: Error) => void;
  }[] = [];
  #pumping = false;
  #idle: ReturnType<typeof setTimeout> | undefined;

  /** `argv`: how to start the process (default parserArgv()). */
  constructor(argv: () => string[] = () => parserArgv()) {
    this.#argv = argv;
  }

  /**
   * chunkFile() of `text` at `path`. Never throws on content: a file whose parse outruns its
   * deadline, fails or ends the process is cut into line windows, and `unparsed` says why.
   * Text that is not parsed (other languages, binary) is chunked here.
   * @throws {Error} when the process cannot start (then for a minute without trying again).
   */
  chunk(path: string, text: string, hash = sha256(text)): Promise<ChunkedFile> {
    if (!parses(path, text)) return chunkFile(path, text, hash);
    return new Promise((resolve, reject) => {
      this.#waiting.push({ request: { path, text, hash }, resolve, reject });
      if (!this.#pumping) void this.#pump();
    });
  }

  /** Ends the process (a later file starts another) and waits for it to end. */
  async close(): Promise<void> {
    clearTimeout(this.#idle);
    const running = this.#running ?? await this.#starting?.catch(() => undefined);
    this.#running = undefined;
    await running?.end();
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    clearTimeout(this.#idle);
    try {
      for (let next = this.#waiting.shift(); next; next = this.#waiting.shift()) {
        let chunked: ChunkedFile;
        try {
          chunked = await this.#parse(next.request);
        } catch (error) {
          next.reject(error instanceof Error ? error : new Error(String(error)));
          continue;
        }
        // The caller goes on once this loop has sent the next file (it awaits after the write).
        next.resolve(chunked);
      }
    } finally {
      this.#pumping = false;
      const idle = setTimeout(() => void this.close(), IDLE_MS);
      Deno.unrefTimer(idle);
      this.#idle = idle;
    }
  }

  async #parse(file: ParserRequest): Promise<ChunkedFile> {
    const process = this.#running ?? await this.#start();
    const limitMs = parseDeadlineMs(file.text.length) + ANSWER_MARGIN_MS;
    const answer = await process.ask(file, limitMs);
    if (typeof answer === "string" || "last" in answer || !("chunked" in answer)) {
      if (this.#running === process) this.#running = undefined;
      await process.end();
    }
    if (answer === "overdue") {
      return windowedFile(file, `its parse took longer than ${seconds(limitMs)}`);
    }
    if (answer === "ended") {
      return windowedFile(file, "the parser process ended while parsing it");
    }
    if ("chunked" in answer) return answer.chunked;
    if ("error" in answer) {
      return windowedFile(file, `the parser failed on it: ${answer.error}`);
    }
    return windowedFile(file, "the parser process answered out of turn");
  }

  async #start(): Promise<Running> {
    if (this.#startFailed !== undefined && performance.now() < this.#startFailed.until) {
      throw new Error(this.#startFailed.why);
    }
    this.#starting = JsonLineProcess.start<ParserRequest, ParserAnswer>(
      this.#argv(),
      START_MS,
      { maxLineChars: MAX_ANSWER_CHARS },
    );
    try {
      this.#running = await this.#starting;
      this.#startFailed = undefined;
      return this.#running;
    } catch (error) {
      const message = `Cannot start the code index's parser process: ${why(error)}`;
      this.#startFailed = { until: performance.now() + START_RETRY_MS, why: message };
      throw new Error(message, { cause: error });
    } finally {
      this.#starting = undefined;
    }
  }
}

function why(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
