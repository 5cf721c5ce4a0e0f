/**
 * One of tern's own helper processes that answers requests, one JSON line each way: the code
 * index's parser and the shell parser, where tree-sitter runs apart from tern's process. It is
 * started in a watched process group (it ends with tern, SIGKILL included), prints
 * `{"ready":true}` once loaded, and is killed when an answer is overdue. Idle, it does not
 * keep tern running.
 */
import { ownDenoEnv } from "./deno_dir_env.ts";
import { LineSplitter } from "./line_splitter.ts";
import { spawnWatchedProcessGroup } from "./watched_process_group.ts";

/** An answer, or why none came: "overdue" (the process was killed) or "ended". */
export type LineAnswer<Answer> = Answer | "overdue" | "ended";

/** One running helper process. */
export class JsonLineProcess<Request, Answer> {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: LineReader;
  #status: Promise<Deno.CommandStatus>;
  #ended = false;

  private constructor(child: Deno.ChildProcess, maxLineChars: number) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#lines = new LineReader(child.stdout, maxLineChars);
    this.#status = child.status;
    // Idle, it does not keep tern running; a request pending keeps its timer.
    child.unref();
  }

  /**
   * Starts tern's own Deno with `args` (from `/`, with Deno's cache of this process) and waits
   * for its `ready` line. A line of its longer than `options.maxLineChars` (default: no limit)
   * is not held: that answer is "ended".
   * @throws {Error} when it does not load within `startMs` or ends at once, saying which.
   */
  static async start<Request, Answer>(
    argv: readonly string[],
    startMs: number,
    options: { maxLineChars?: number } = {},
  ): Promise<JsonLineProcess<Request, Answer>> {
    const [command, ...args] = argv;
    const child = await spawnWatchedProcessGroup(command, {
      args,
      ownRuntime: true,
      cwd: "/",
      // Deno's cache (the launcher's DENO_DIR), so tern's modules are not compiled again.
      env: ownDenoEnv(),
    });
    // Nothing is read from it: the process is --quiet and silences what it would print.
    child.stderr.cancel().catch(() => {});
    const running = new JsonLineProcess<Request, Answer>(
      child,
      options.maxLineChars ?? Infinity,
    );
    const first = await running.#read(startMs);
    if (typeof first === "object" && first !== null && "ready" in first) return running;
    await running.end();
    const status = await running.#status;
    throw new Error(
      first === "overdue"
        ? `it did not load within ${startMs / 1000} s`
        : `it ended at once (${status.signal === null ? `exit ${status.code}` : status.signal})`,
    );
  }

  /**
   * Sends `request`; its answer, "overdue" past `limitMs` (the process is then killed). The
   * limit counts from the send: a process that stops reading cannot hold a large request, and
   * so its caller, past it.
   */
  async ask(request: Request, limitMs: number): Promise<LineAnswer<Answer>> {
    const deadline = performance.now() + limitMs;
    const sending = this.#writer.write(new TextEncoder().encode(`${JSON.stringify(request)}\n`))
      .then(() => "sent" as const, () => "ended" as const);
    const sent = await within(sending, limitMs);
    if (sent === "overdue") {
      await this.end();
      return "overdue";
    }
    if (sent === "ended") return "ended";
    return await this.#read(deadline - performance.now());
  }

  /** Kills the process (if it still runs) and waits for it to end. */
  async end(): Promise<void> {
    if (!this.#ended) {
      this.#ended = true;
      // Waited for, its end keeps tern running until it comes.
      this.#child.ref();
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await Promise.allSettled([this.#writer.close(), this.#lines.cancel(), this.#status]);
  }

  async #read(limitMs: number): Promise<LineAnswer<Answer>> {
    try {
      const line = await within(this.#lines.next(), Math.max(0, limitMs));
      if (line === "overdue") {
        await this.end();
        return "overdue";
      }
      if (line === undefined) return "ended";
      return JSON.parse(line) as Answer;
    } catch {
      return "ended";
    }
  }
}

/** What `promise` settles to, or "overdue" when it has not within `limitMs`. */
async function within<T>(promise: Promise<T>, limitMs: number): Promise<T | "overdue"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overdue = new Promise<"overdue">((resolve) => {
    timer = setTimeout(() => resolve("overdue"), limitMs);
  });
  try {
    return await Promise.race([promise, overdue]);
  } finally {
    clearTimeout(timer);
  }
}

/** The lines of a byte stream, read one at a time (without their "\n"). */
class LineReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #decoder = new TextDecoder();
  #splitter = new LineSplitter();
  #ready: string[] = [];
  #maxLineChars: number;

  constructor(stream: ReadableStream<Uint8Array>, maxLineChars: number) {
    this.#reader = stream.getReader();
    this.#maxLineChars = maxLineChars;
  }

  /**
   * The next line; undefined at the end of the stream.
   * @throws {RangeError} once the line under way grows past the longest allowed.
   */
  async next(): Promise<string | undefined> {
    for (;;) {
      const line = this.#ready.shift();
      if (line !== undefined) return line;
      const { done, value } = await this.#reader.read();
      if (done) return undefined;
      this.#ready.push(...this.#splitter.push(this.#decoder.decode(value, { stream: true })));
      if (this.#splitter.pending > this.#maxLineChars) {
        this.#splitter.drop();
        throw new RangeError(`A line is longer than ${this.#maxLineChars} characters`);
      }
    }
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}
