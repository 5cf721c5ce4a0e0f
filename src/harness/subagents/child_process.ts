/**
 * One `tern child` process seen from the parent: started through bin/tern (the same launcher,
 * so the same Deno permissions as tern's own process), given its request on stdin, its stdout
 * read line by line and validated. It ends with exactly one outcome: the child's final record,
 * or a failure the parent makes up (a protocol error, an exit without a final record, a kill
 * at the time limit).
 */
import { hostSearchPath, personPath } from "../../core/host_programs.ts";
import { ternCommand } from "../../core/packaging.ts";
import { dirname, join } from "../../core/path.ts";
import { streamLines } from "../../core/line_splitter.ts";
import { answerOf, type AskPerson } from "../../sandbox/review.ts";
import {
  CHILD_PROTOCOL_VERSION,
  type ChildFinal,
  childLineSchema,
  type ChildRequest,
  type ChildStatus,
  type ParentLine,
  parseLine,
} from "./protocol.ts";

/** How the parent runs one child. */
export interface ChildProcessOptions {
  request: ChildRequest;
  /** Passed as `--base-url` so the launcher grants the child the same model host. */
  baseUrl?: string;
  /** Longest the child may run, in milliseconds; then it is stopped (`timed_out`). */
  timeoutMs: number;
  /** Settles an escalated call (the parent's person or denial). Must not throw. */
  escalate: AskPerson;
  /** Called once with the run's outcome. */
  onEnd: (outcome: ChildOutcome) => void;
  /** Called at the child's first line (its run started: its first request is on its way). */
  onStarted?: () => void;
}

/** How a run ended: the child's final record, or what the parent saw instead. */
export type ChildOutcome =
  | { kind: "final"; final: ChildFinal; timedOut: boolean }
  | { kind: "lost"; status: ChildStatus; error: string };

/** Grace between SIGTERM and SIGKILL when a child is stopped, in milliseconds. */
const STOP_GRACE_MS = 3000;
const encoder = new TextEncoder();

/**
 * A `tern child` process started without its request yet: a child about to be given one, or
 * the idle one a session keeps ready (`idle`: it loads its modules and waits on stdin, holding
 * no setting and no grant until its request comes). Its stderr is read from the start.
 */
export class StartedChild {
  readonly process: Deno.ChildProcess;
  readonly stdin: WritableStreamDefaultWriter<Uint8Array>;
  /** What the process was started for (launcher, workspace, model host): see `childKey()`. */
  readonly key: string;
  /** Stderr's last few kilobytes, for the error when the child fails. */
  stderrTail = "";
  readonly stderrRead: Promise<void>;
  #exited = false;

  constructor(where: ChildPlace, idle: boolean) {
    this.key = childKey(where);
    // bin/tern from the tree; the same file or executable when tern is packaged.
    const tern = ternCommand(ternLauncher);
    const args = [...tern.args, "child", ...(where.baseUrl ? ["--base-url", where.baseUrl] : [])];
    const person = personPath();
    this.process = new Deno.Command(tern.command, {
      args,
      cwd: where.cwd,
      env: {
        TERN_DENO_BIN: Deno.execPath(),
        TERN_CHILD_IDLE: idle ? "1" : "0",
        // bin/tern finds bash on a PATH cut now (a write grant may have come since); the
        // child's commands get the person's PATH, told apart.
        PATH: hostSearchPath(),
        ...(person === undefined ? {} : { TERN_PERSON_PATH: person }),
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.process.status.then(() => this.#exited = true, () => this.#exited = true);
    this.stdin = this.process.stdin.getWriter();
    this.stderrRead = this.#readStderr();
  }

  /** Whether the process ended (an idle child that ended is no use). */
  get exited(): boolean {
    return this.#exited;
  }

  /** Kills the process (an idle child holds nothing worth a graceful stop). */
  kill(): void {
    this.stdin.close().catch(() => {});
    try {
      this.process.kill("SIGKILL");
    } catch {
      // Gone.
    }
  }

  async #readStderr(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.process.stderr) {
      this.stderrTail = (this.stderrTail + decoder.decode(chunk, { stream: true })).slice(-4096);
    }
  }
}

/** Where a child runs: its workspace and the model host its launcher grants. */
export interface ChildPlace {
  cwd: string;
  baseUrl?: string;
}

/**
 * What makes two children's processes the same: the launcher (hence the Deno permissions it
 * computes), the workspace (its config names hosts) and the explicit model host.
 */
export function childKey(where: ChildPlace): string {
  const tern = ternCommand(ternLauncher);
  return JSON.stringify([tern.command, tern.args, where.cwd, where.baseUrl ?? null]);
}

/** A running child. */
export class ChildProcess {
  readonly #started: StartedChild;
  readonly #process: Deno.ChildProcess;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  readonly #options: ChildProcessOptions;
  #timedOut = false;
  #stopping: ReturnType<typeof setTimeout> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly done: Promise<void>;

  /**
   * Gives `options.request` to `started` (a pre-started child of the same `childKey()`), or to
   * a child started now.
   */
  constructor(options: ChildProcessOptions, started?: StartedChild) {
    this.#options = options;
    this.#started = started ??
      new StartedChild({ cwd: options.request.cwd, baseUrl: options.baseUrl }, false);
    this.#process = this.#started.process;
    // An idle child was let go of (the parent could end without it); a running one is waited for.
    this.#process.ref();
    this.#stdin = this.#started.stdin;
    this.#send(options.request);
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.stop();
    }, options.timeoutMs);
    this.done = this.#run();
  }

  get pid(): number {
    return this.#process.pid;
  }

  /** Asks the child to stop (SIGTERM: it ends its turn and reports), then kills it. */
  stop(): void {
    if (this.#stopping !== undefined) return;
    try {
      this.#process.kill("SIGTERM");
    } catch {
      return; // Already gone.
    }
    this.#stopping = setTimeout(() => {
      try {
        this.#process.kill("SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }, STOP_GRACE_MS);
  }

  async #run(): Promise<void> {
    let final: ChildFinal | undefined;
    let error: string | undefined;
    let started = false;
    const stderr = this.#started.stderrRead;
    try {
      for await (const line of lines(this.#process.stdout)) {
        if (line.trim() === "") continue;
        const parsed = parseLine(childLineSchema, line, "the child's line");
        if (!started) {
          started = true;
          this.#options.onStarted?.();
        }
        if (parsed.type === "final") {
          final = parsed;
          await this.#stdin.close().catch(() => {});
        } else if (parsed.type === "escalation") {
          this.#answer(parsed.escalationId, parsed.request);
        }
      }
    } catch (caught) {
      error = caught instanceof Error ? caught.message : String(caught);
      this.#kill();
    }
    const status = await this.#process.status;
    await stderr;
    clearTimeout(this.#timer);
    clearTimeout(this.#stopping);
    await this.#stdin.close().catch(() => {});
    const request = this.#options.request;
    if (final !== undefined && error === undefined && sameRun(final, request)) {
      this.#options.onEnd({ kind: "final", final, timedOut: this.#timedOut });
      return;
    }
    const why = error ??
      (final !== undefined
        ? "the final record names another run"
        : `the child exited (${status.signal ?? `code ${status.code}`}) without a final record`);
    const tail = this.#started.stderrTail.trim().split("\n").slice(-3).join(" | ");
    this.#options.onEnd({
      kind: "lost",
      status: this.#timedOut ? "timed_out" : "failed",
      error: this.#timedOut
        ? `Stopped after ${this.#options.timeoutMs} ms (the subagent time limit)`
        : `${why}${tail ? `: ${tail}` : ""}`,
    });
  }

  /**
   * Settles one escalation; the question is withdrawn (its dialog closed) when the child
   * stops waiting for it: its timeout passed, or it exited.
   */
  #answer(escalationId: string, request: Parameters<AskPerson>[0]): void {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(),
      this.#options.request.permissions.escalationTimeoutMs,
    );
    this.#process.status.then(() => controller.abort(), () => controller.abort());
    this.#options.escalate(request, controller.signal).finally(() => clearTimeout(timer)).then(
      (answer) => answer,
      () => "deny" as const,
    ).then((answer) => {
      this.#send(
        {
          type: "escalation_answer",
          version: CHILD_PROTOCOL_VERSION,
          escalationId,
          answer: answerOf(answer),
          ...(typeof answer === "object" ? { reason: answer.deny } : {}),
        } satisfies ParentLine,
      );
    });
  }

  #send(line: ChildRequest | ParentLine): void {
    this.#stdin.write(encoder.encode(JSON.stringify(line) + "\n")).catch(() => {});
  }

  #kill(): void {
    try {
      this.#process.kill("SIGKILL");
    } catch {
      // Gone.
    }
  }
}

function sameRun(final: ChildFinal, request: ChildRequest): boolean {
  return final.runId === request.runId && final.agentId === request.agentId &&
    final.childSessionId === request.childSessionId && final.taskName === request.taskName;
}

/** The longest protocol line read, in characters: a final record's content fits many times. */
const MAX_LINE_CHARS = 16 * 1024 * 1024;

/**
 * The lines of a byte stream (without their "\n"); a last line without one counts too.
 * @throws {RangeError} for a line longer than 16 Mi characters (never buffered whole).
 */
export async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  yield* streamLines(stream, {
    maxChars: MAX_LINE_CHARS,
    error: () =>
      new RangeError(`Cannot read a protocol line longer than ${MAX_LINE_CHARS} characters`),
  });
}

/**
 * tern's launcher, bin/tern, found above the main module (main.ts, or the bundle under
 * .tools/bundle): a child starts exactly as tern does.
 * @throws {Error} when there is none.
 */
export function ternLauncher(): string {
  launcher ??= findLauncher();
  return launcher;
}

let launcher: string | undefined;

function findLauncher(): string {
  let folder = dirname(new URL(Deno.mainModule).pathname);
  for (let i = 0; i < 4; i++) {
    const candidate = join(folder, "bin", "tern");
    try {
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch {
      // Not here: one folder up.
    }
    folder = dirname(folder);
  }
  throw new Error(`Cannot start a subagent: no bin/tern above "${Deno.mainModule}"`);
}
