/**
 * One `tern child` process seen from the parent: started through bin/tern (the same launcher,
 * so the same Deno permissions as tern's own process), given its request on stdin, its stdout
 * read line by line and validated. It ends with exactly one outcome: the child's final record,
 * or a failure the parent makes up (a protocol error, an exit without a final record, a kill
 * at the time limit).
 */
import { hostProgram, hostSearchPath, personPath } from "../../core/host_programs.ts";
import { signalProcessGroup, spawnProcessGroup } from "../../core/process_group.ts";
import { ternCommand } from "../../core/packaging.ts";
import { dirname, join } from "../../core/path.ts";
import { streamLines } from "../../core/line_splitter.ts";
import { answerOf, type AskPerson, type PersonReply } from "../../sandbox/review.ts";
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
  /** Passed as `TERN_BASE_URL` so the launcher grants the child the same model host. */
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
/** How long a child's stdout is still read after it exited, in milliseconds. */
const DRAIN_MS = 2000;
/** Escalations of one child waiting for the person at once; more are denied unasked. */
const MAX_WAITING_ESCALATIONS = 16;
/** The share of its time an escalation must have left when its turn comes to be asked. */
const LEAST_TIME_LEFT = 0.25;
const encoder = new TextEncoder();

/**
 * The wrapper run as `bash -p -c <wrapper> tern-child-group <sleep> <tern> <args>` in a new
 * session and process group (see `spawnProcessGroup`): it starts a watchdog in the group, then
 * execs tern under its own pid, the group's leader. The watchdog, a grandchild (the child has no
 * child it did not start), ignores the signals a terminal or a stop sends and checks every
 * second whether the leader is still there; once it is gone (its pid, the group's id, is never
 * reused while the group has a process), it kills the group, itself too. So what the child left
 * in its group ends with it even when the parent is gone (killed by SIGKILL: a running child
 * goes on to record its outcome, see crash_test). The parent kills the group too as soon as it
 * sees the child exit. A process that leaves the group (`setsid`) is out of its reach: the
 * sandbox's pid namespace ends those of sandboxed commands.
 */
const CHILD_GROUP_WRAPPER = `( ( exec "$BASH" -p -c 'trap "" TERM INT HUP; ` +
  `while kill -0 "$1" 2>/dev/null; do "$2" 1; done; kill -KILL 0' tern-child-watchdog "$$" ` +
  `"$1" ) & ) </dev/null >/dev/null 2>&1; shift; exec "$@"`;

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
  /**
   * Aborted DRAIN_MS after the process exited: its pipes are read no longer, since a process it
   * left behind may hold them open, and the run's outcome must not wait for that.
   */
  readonly drained: AbortSignal;
  #exited = false;

  constructor(where: ChildPlace, idle: boolean) {
    this.key = childKey(where);
    // bin/tern from the tree; the same file or executable when tern is packaged.
    const tern = ternCommand(ternLauncher);
    // The model host reaches the launcher (which lets the child connect to it) in the
    // environment, never the command line, which every local user may read (`ps`): a base URL
    // may hold a password or a key.
    const args = [...tern.args, "child"];
    const person = personPath();
    // In a group of its own, watched: what it leaves behind in it ends with it.
    this.process = spawnProcessGroup(hostProgram("bash"), {
      args: ["-p", "-c", CHILD_GROUP_WRAPPER, "tern-child-group", hostProgram("sleep")]
        .concat(tern.command, args),
      cwd: where.cwd,
      env: {
        TERN_DENO_BIN: Deno.execPath(),
        TERN_CHILD_IDLE: idle ? "1" : "0",
        ...(where.baseUrl === undefined ? {} : { TERN_BASE_URL: where.baseUrl }),
        // bin/tern finds bash on a PATH cut now (a write grant may have come since); the
        // child's commands get the person's PATH, told apart.
        PATH: hostSearchPath(),
        ...(person === undefined ? {} : { TERN_PERSON_PATH: person }),
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    });
    const drained = new AbortController();
    this.drained = drained.signal;
    this.process.status.finally(() => {
      this.#exited = true;
      Deno.unrefTimer(setTimeout(() => drained.abort(), DRAIN_MS));
      // What the child left in its group ends now (its watchdog would within a second).
      signalProcessGroup(this.process.pid, "SIGKILL");
    }).catch(() => {});
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
    try {
      for await (const chunk of readUntil(this.process.stderr, this.drained)) {
        this.stderrTail = (this.stderrTail + decoder.decode(chunk, { stream: true })).slice(-4096);
      }
    } catch {
      // Cut after the exit: the tail read so far is what there is.
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
  /** The child wrote its final record or exited: it asks nothing more. */
  #over = false;
  /** Escalations not yet answered, by id, each with how to withdraw it. */
  readonly #open = new Map<string, AbortController>();
  /** The person is asked one escalation at a time: the last one queued. */
  #questions: Promise<void> = Promise.resolve();
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
    // Its questions are withdrawn, and an answer given meanwhile is a denial: a child is
    // stopped when it may hold less (a narrowing, a cancelled turn), so it is given nothing more.
    this.#end();
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
    const drained = this.#started.drained;
    const ended = () => this.#end();
    this.#process.status.then(ended, ended);
    try {
      for await (const line of lines(readUntil(this.#process.stdout, drained))) {
        if (line.trim() === "") continue;
        const parsed = parseLine(childLineSchema, line, "the child's line");
        if (parsed.type !== "final" && parsed.runId !== this.#options.request.runId) {
          throw new TypeError(
            `Cannot read the child's line: it names run "${
              parsed.runId.slice(0, 40)
            }", not its own`,
          );
        }
        if (!started) {
          started = true;
          this.#options.onStarted?.();
        }
        if (parsed.type === "final") {
          final = parsed;
          this.#end();
          await this.#stdin.close().catch(() => {});
        } else if (parsed.type === "escalation") {
          this.#answer(parsed.escalationId, parsed.request);
        }
      }
    } catch (caught) {
      // Stdout cut after the child's exit is no protocol error: the outcome says how it ended.
      if (!drained.aborted) {
        error = caught instanceof Error ? caught.message : String(caught);
        this.#kill();
      }
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
   * Settles one escalation. The person is asked one at a time, never for an id that waits for
   * its answer already, nor after the child's final record, its exit or its stop; a question is
   * withdrawn (its dialog closed) when the child stops waiting for it: its timeout passed, or
   * the child ended. One left with less than a quarter of its time when its turn comes is
   * denied unasked, and so is one past MAX_WAITING_ESCALATIONS waiting.
   */
  #answer(escalationId: string, request: Parameters<AskPerson>[0]): void {
    if (this.#over || this.#open.has(escalationId)) return;
    if (this.#open.size >= MAX_WAITING_ESCALATIONS) {
      this.#reply(escalationId, "deny");
      return;
    }
    const controller = new AbortController();
    this.#open.set(escalationId, controller);
    const timeoutMs = this.#options.request.permissions.escalationTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const withdrawn = new Promise<"deny">((resolve) => {
      controller.signal.addEventListener("abort", () => resolve("deny"), { once: true });
    });
    const asked = this.#questions.then(async () => {
      // Too little of its time left for a person to read it: denied unasked.
      const late = deadline - Date.now() < timeoutMs * LEAST_TIME_LEFT;
      const answer = controller.signal.aborted || late ? "deny" as const : await Promise.race([
        this.#options.escalate(request, controller.signal).catch(() => "deny" as const),
        withdrawn,
      ]);
      clearTimeout(timer);
      this.#open.delete(escalationId);
      this.#reply(escalationId, this.#over ? "deny" : answer);
    });
    this.#questions = asked.catch(() => {});
  }

  /** Writes the answer to one escalation (a person's denial with their words as its reason). */
  #reply(escalationId: string, answer: PersonReply): void {
    this.#send(
      {
        type: "escalation_answer",
        version: CHILD_PROTOCOL_VERSION,
        escalationId,
        answer: answerOf(answer),
        ...(typeof answer === "object" ? { reason: answer.deny } : {}),
      } satisfies ParentLine,
    );
  }

  /** The child asks nothing more: its open questions are withdrawn. */
  #end(): void {
    this.#over = true;
    for (const controller of this.#open.values()) controller.abort();
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

/** `stream`'s chunks until `signal` aborts (then the read throws and the stream is cancelled). */
function readUntil(
  stream: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  return stream.pipeThrough(new TransformStream(), { signal });
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
