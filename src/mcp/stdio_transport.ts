/**
 * The MCP stdio transport: a server process in a process group of its own, newline-delimited
 * JSON-RPC on its stdin and stdout, its stderr kept (the tail) for error messages. Closing ends
 * the whole group (what `npx` and friends started too), gracefully, then by force; a watchdog
 * in the group ends it when tern dies, even by SIGKILL (see watched_process_group.ts).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types";
// @ts-types="@modelcontextprotocol/sdk/types"
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { signalProcessGroup, terminateProcessGroup } from "../core/process_group.ts";
import { spawnWatchedProcessGroup } from "../core/watched_process_group.ts";
import { visibleText } from "../core/terminal_text.ts";

/** Options for {@linkcode StdioProcessTransport}. */
export interface StdioTransportOptions {
  command: string;
  args: string[];
  /** Working directory (absolute). */
  cwd: string;
  /** The complete environment; nothing else is inherited (clearEnv). */
  env: Record<string, string>;
  /**
   * After closing stdin, how long the server gets to exit, then SIGTERM to its group, the same
   * again, then SIGKILL. Milliseconds; default 1000.
   */
  graceMs?: number;
  /** Characters of stderr kept (the tail), for error messages. Default 4000. */
  stderrChars?: number;
  /** Label for messages, e.g. `MCP server "everything"`; default `MCP server "<command>"`. */
  label?: string;
  /**
   * Characters one stdout line may have; a longer one is a protocol violation (its text is not
   * kept while it grows). Default 16 MiB, as the lines of a subagent.
   */
  maxLineChars?: number;
}

/** How long output pipes may stay open once the group is gone (a process that left it). */
const DRAIN_MS = 1000;
/** How long a server that closed its stdout has to exit before it is stopped as broken. */
const STDOUT_END_GRACE_MS = 1000;
/** Characters of an offending stdout line quoted in the error. */
const QUOTED_CHARS = 200;
/** Default of {@linkcode StdioTransportOptions.maxLineChars}. */
const MAX_LINE_CHARS = 16 * 1024 * 1024;

type Reader = ReadableStreamDefaultReader<Uint8Array>;
type Writer = WritableStreamDefaultWriter<Uint8Array>;

/**
 * A {@linkcode Transport} over a child process's stdin and stdout. The process starts in a group
 * (its pgid is its pid) with exactly `env`, and the group is killed when tern dies (a watchdog
 * on a liveness pipe, see `spawnWatchedProcessGroup`). A stdout line that is not a JSON-RPC
 * message is a protocol violation: `onerror`, then the transport closes (empty lines are
 * skipped, an unterminated last line is dropped). When the server exits by itself, `onerror`
 * says how (with the stderr tail) and the transport closes. `onclose` fires exactly once. Once
 * `close()` resolves, no process of the group, pipe or timer is left.
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  sessionId?: string;

  #options: StdioTransportOptions;
  #label: string;
  #child?: Deno.ChildProcess;
  #writer?: Writer;
  #readers: Reader[] = [];
  #pumps: Promise<unknown> = Promise.resolve();
  #spawning?: Promise<unknown>;
  #pending: string[] = [];
  #pendingChars = 0;
  #stderr = "";
  #status?: Deno.CommandStatus;
  #closing?: Promise<void>;
  #violated = false;
  #closed = false;
  /**
   * Whether tern closed the connection: what the server writes while it is stopped is read
   * (so it never blocks on a full pipe) but not parsed, which a flooding server would have
   * tern do until its group is gone.
   */
  #closeAsked = false;

  constructor(options: StdioTransportOptions) {
    this.#options = options;
    this.#label = options.label ?? `MCP server "${options.command}"`;
  }

  /** The server's pid (its process group id too), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The last `stderrChars` characters the server wrote to stderr (trimmed). */
  get stderrTail(): string {
    return this.#stderr.trim();
  }

  /** How the process ended, once it has. */
  get exitStatus(): Deno.CommandStatus | undefined {
    return this.#status;
  }

  /**
   * Spawns the process. Throws a clear Error when it cannot start (`Cannot start MCP server
   * "x": command "foo" not found`), or when called twice or after `close()`.
   */
  async start(): Promise<void> {
    if (this.#spawning !== undefined || this.#closing !== undefined) {
      throw new Error(`Cannot start ${this.#label}: already started`);
    }
    const { command, args, cwd, env } = this.#options;
    const spawning = spawnWatchedProcessGroup(command, { args, cwd, env });
    // A close() meanwhile waits for this, then stops what started.
    this.#spawning = spawning.catch(() => {});
    let child: Deno.ChildProcess;
    try {
      child = await spawning;
    } catch (error) {
      const problem = spawnProblem(error, command, cwd);
      throw new Error(`Cannot start ${this.#label}: ${problem}`, { cause: error });
    }
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#writer.closed.catch(() => {});
    this.#readers = [child.stdout.getReader(), child.stderr.getReader()];
    const [stdout, stderr] = this.#readers;
    const answers = pump(stdout, (text) => this.#onStdout(text));
    this.#pumps = Promise.all([answers, pump(stderr, (text) => this.#onStderr(text))]);
    void answers.then(() => this.#stdoutEnded(child));
    child.status.then((status) => {
      this.#status = status;
      this.#closing ??= this.#shutdown(status);
    });
  }

  /** Writes `message` as one JSON line. Rejects when closed or when the process is gone. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#writer === undefined || this.#closing !== undefined) {
      throw new Error(`Cannot send to ${this.#label}: the connection is closed`);
    }
    const line = new TextEncoder().encode(`${JSON.stringify(message)}\n`);
    try {
      await this.#writer.write(line);
    } catch (error) {
      throw new Error(`Cannot send to ${this.#label}: ${describe(error)}`, { cause: error });
    }
  }

  /**
   * Idempotent. Closes stdin, gives the server `graceMs` to exit, then stops its group (SIGTERM,
   * `graceMs`, SIGKILL); SIGKILLs whatever is left of the group once the leader has exited.
   * Resolves when the process has exited and its pipes are drained (bounded). Never rejects.
   */
  close(): Promise<void> {
    this.#closeAsked = true;
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  /** Stops the server (`exited`: it ended by itself with that status); never rejects. */
  async #shutdown(exited?: Deno.CommandStatus): Promise<void> {
    try {
      await this.#stop(exited);
    } catch (error) {
      this.#report(asError(error));
    }
    this.#closed = true;
    try {
      this.onclose?.();
    } catch (error) {
      this.#report(asError(error));
    }
  }

  async #stop(exited?: Deno.CommandStatus): Promise<void> {
    await this.#spawning;
    const child = this.#child;
    if (child === undefined) return;
    const graceMs = this.#options.graceMs ?? 1000;
    const stdinClosed = this.#writer!.close().catch(() => {});
    if (exited === undefined && !await settlesWithin(child.status, graceMs)) {
      await terminateProcessGroup(child.pid, child.status, graceMs);
    }
    await child.status;
    // Children the server started may still hold our pipes: the group goes with its leader.
    signalProcessGroup(child.pid, "SIGKILL");
    if (!await settlesWithin(this.#pumps, DRAIN_MS)) {
      await Promise.all(this.#readers.map((reader) => reader.cancel().catch(() => {})));
    }
    await this.#pumps;
    await settlesWithin(stdinClosed, DRAIN_MS);
    if (exited !== undefined && !this.#violated) this.#report(this.#exitError(exited));
  }

  #exitError(status: Deno.CommandStatus): Error {
    const how = status.signal === null
      ? `exited with code ${status.code}`
      : `was killed by ${status.signal}`;
    // One line, its controls shown: the server's stderr is its own text, and a line break in
    // it would forge a line of tern's own where the error is printed.
    const tail = visibleText(this.stderrTail);
    return new Error(`${this.#label} ${how}${tail === "" ? "" : `: ${tail}`}`);
  }

  /** Splits stdout into lines; returns false to stop reading (after a protocol violation). */
  #onStdout(text: string): boolean {
    const max = this.#options.maxLineChars ?? MAX_LINE_CHARS;
    let start = 0;
    for (;;) {
      const end = text.indexOf("\n", start);
      const piece = text.slice(start, end === -1 ? text.length : end);
      if (this.#pendingChars + piece.length > max) {
        const head = (this.#pending[0] ?? "") + piece;
        return this.#violation(`wrote a stdout line longer than ${max} characters`, head);
      }
      if (end === -1) {
        if (piece !== "") this.#pending.push(piece);
        this.#pendingChars += piece.length;
        return true;
      }
      const line = this.#pending.join("") + piece;
      this.#pending = [];
      this.#pendingChars = 0;
      start = end + 1;
      if (!this.#onLine(line)) return false;
    }
  }

  #onLine(raw: string): boolean {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "" || this.#closed || this.#closeAsked) return true;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return this.#violation("wrote non-JSON to stdout", line);
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) return this.#violation("wrote a non-JSON-RPC message to stdout", line);
    try {
      this.onmessage?.(parsed.data);
    } catch (error) {
      this.#report(asError(error));
    }
    return true;
  }

  #violation(what: string, line: string): false {
    if (this.#violated) return false;
    this.#violated = true;
    this.#report(new Error(`${this.#label} ${what}: "${line.slice(0, QUOTED_CHARS)}"`));
    this.close();
    return false;
  }

  /**
   * A server that closed its stdout and still runs can never answer again: it is stopped, as a
   * violation, or every call would wait for its timeout (two minutes by default). One that exits
   * within {@linkcode STDOUT_END_GRACE_MS} is reported by its exit, with its code and stderr.
   */
  async #stdoutEnded(child: Deno.ChildProcess): Promise<void> {
    if (this.#closing !== undefined || this.#violated) return;
    if (await settlesWithin(child.status, STDOUT_END_GRACE_MS)) return;
    if (this.#closing !== undefined || this.#violated) return;
    this.#violated = true;
    this.#report(new Error(`${this.#label} closed its stdout but runs on: it cannot answer`));
    this.close();
  }

  #onStderr(text: string): boolean {
    const keep = this.#options.stderrChars ?? 4000;
    this.#stderr = (this.#stderr + text).slice(-keep);
    return true;
  }

  #report(error: Error): void {
    try {
      this.onerror?.(error);
    } catch {
      // A throwing error handler must not break the shutdown.
    }
  }
}

/** Reads `reader` to the end, decoded; `onText` returning false cancels the stream. */
async function pump(reader: Reader, onText: (text: string) => boolean): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (!onText(decoder.decode(value, { stream: true }))) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // The pipe broke or was cancelled while closing: nothing more to read.
  } finally {
    reader.releaseLock();
  }
}

/** Whether `promise` settles within `ms` milliseconds; the timer never outlives the call. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  const settled = promise.then(() => true as const, () => true as const);
  const outcome = await Promise.race([settled, late]);
  clearTimeout(timer);
  return outcome;
}

function spawnProblem(error: unknown, command: string, cwd: string): string {
  if (error instanceof Deno.errors.NotFound) {
    return isDirectory(cwd)
      ? `command "${command}" not found`
      : `working directory "${cwd}" not found`;
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return `command "${command}" is not executable (permission denied)`;
  }
  if (error instanceof Deno.errors.NotCapable) {
    return `running "${command}" is not permitted (tern needs --allow-run for it)`;
  }
  return describe(error);
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
