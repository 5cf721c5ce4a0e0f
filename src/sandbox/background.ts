/**
 * The background-process supervisor of one sandbox: dev servers, watchers and long builds the
 * model starts with `bash` `run_in_background`. Each runs in a sandbox of its own (see
 * `background_launch.ts`) and a process group of its own, with a capped log; readiness (a port
 * that opens, a text in the log) can be declared and waited for. All of them end when the
 * supervisor closes, and with tern (`--die-with-parent`, or the watchdog outside bubblewrap).
 */
import { signalProcessGroup, spawnProcessGroup } from "../core/process_group.ts";
import { stopLaunch } from "./process.ts";
import type { BackgroundLaunch, BackgroundLauncher } from "./background_launch.ts";
import { LOG_CHARS, LogRing } from "./background_log.ts";
import type { Message } from "../core/messages.ts";

/** Background processes running at once, at most. */
export const MAX_PROCESSES = 8;
/** Processes remembered (running and ended); the oldest ended ones are forgotten first. */
export const MAX_RECORDS = 16;

/** Where a background process is. */
export type ProcessState = "running" | "ready" | "exited" | "stopped";

/** What a background process is, as listed. */
export interface ProcessInfo {
  /** `p1`, `p2`, … in the order they started. */
  id: string;
  command: string;
  state: ProcessState;
  /** What readiness was declared (`port 8000`, `text "Listening"`), if any. */
  readiness?: string;
  /** Exit code once it ended (128 + n when killed by signal n, in the sandbox or not). */
  exitCode: number | null;
  /** Whether it runs in bubblewrap. */
  confined: boolean;
  /**
   * When it started, as `performance.now()`: monotonic, so it orders against this process's
   * other events (a grant) even when the clock is set back.
   */
  startedAt: number;
  /** Characters it printed in total. */
  logChars: number;
}

/** Options of one start. */
export interface StartOptions {
  cwd: string;
  /** Ready once `127.0.0.1:<port>` accepts a connection in the process's network namespace. */
  port?: number;
  /** Ready once the log contains this text (plain text, not a pattern). */
  text?: string;
}

/** How a wait for readiness ended. */
export type WaitOutcome = "ready" | "exited" | "timeout" | "cancelled";

/** What the tools use: starts bound to one confinement by the permission gate. */
export interface ProcessControl {
  /** Starts a process. @throws {RangeError} when {@linkcode MAX_PROCESSES} run already. */
  start(command: string, options: StartOptions): Promise<ProcessInfo>;
  /** Waits until `id` is ready or ended, `timeoutMs` passed or `signal` fired. */
  wait(id: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<WaitOutcome>;
  list(): ProcessInfo[];
  /** @throws {RangeError} for an unknown id. */
  info(id: string): ProcessInfo;
  /** The last `tail` lines, or with `grep` the last `tail` lines containing it. */
  logs(id: string, options: { tail: number; grep?: string }): { lines: string[]; dropped: number };
  /** Stops `id` and everything it started; a process already ended is left as it is. */
  stop(id: string): Promise<ProcessInfo>;
}

/** What a closed supervisor leaves to the next one of the same session (see `handOver`). */
export interface ProcessHandOver {
  /** The next process number. */
  nextId: number;
  /** What no tool result told the model yet. */
  notes: string[];
  /** Numbers below this one were given before the session was resumed. */
  resumedBelow?: number;
}

/** Options for {@linkcode ProcessSupervisor}. */
export interface SupervisorOptions {
  /** Launches in bubblewrap (or without a sandbox where the run has none). */
  launch: BackgroundLauncher;
  /** Launches with no sandbox, for commands approved to run without one. */
  launchUnsandboxed: BackgroundLauncher;
  /** Between SIGTERM and SIGKILL on stop, in milliseconds; default 500. */
  graceMs?: number;
  /** Characters each log keeps; default {@linkcode LOG_CHARS}. */
  logChars?: number;
}

interface Managed {
  info: ProcessInfo;
  log: LogRing;
  child: Deno.ChildProcess;
  /** Settles once the process ended and its output is read. */
  done: Promise<void>;
  ready: Promise<void>;
  markReady: () => void;
  /** Waits for it under way: what they return tells the model, no note needed. */
  waiting: number;
}

/** Every background process of one sandbox. */
export class ProcessSupervisor {
  readonly #options: SupervisorOptions;
  readonly #records = new Map<string, Managed>();
  readonly #listeners = new Set<() => void>();
  #next = 1;
  /** Ids below this one were given by the tern runs before this session was resumed. */
  #resumedBelow = 1;
  /** Ids below this one were given by the supervisors before this one, in this run. */
  #firstOwn = 1;
  /** What changed that no tool result has told the model yet. */
  #notes: string[] = [];
  #starting = 0;
  #closed = false;

  constructor(options: SupervisorOptions) {
    this.#options = options;
  }

  /** The control the gate hands to one call: `unsandboxed` for a command approved without one. */
  control(unsandboxed: boolean): ProcessControl {
    const launcher = unsandboxed ? this.#options.launchUnsandboxed : this.#options.launch;
    return {
      start: (command, options) => this.#start(launcher, command, options),
      wait: (id, options) => this.#wait(id, options),
      list: () => this.list(),
      info: (id) => ({ ...this.#get(id).info }),
      logs: (id, options) => this.#logs(id, options),
      stop: (id) => this.#stop(id),
    };
  }

  /** Every process remembered, oldest first. */
  list(): ProcessInfo[] {
    return [...this.#records.values()].map((record) => ({ ...record.info }));
  }

  /**
   * What changed since the last call and no tool result said (a process that became ready
   * after its start returned, one that ended by itself), one line each, and forgets it: the
   * gate adds it to the next tool result, so a dev server that crashed wakes the model.
   */
  takeNotes(): string[] {
    const notes = this.#notes;
    this.#notes = [];
    return notes;
  }

  /** How many processes run now. */
  running(): number {
    return this.#running();
  }

  /** The last `count` lines of `id`'s log; none for an unknown id. */
  tail(id: string, count: number): string[] {
    return this.#records.get(id)?.log.tail(count) ?? [];
  }

  /** Calls `listener` after each change of state; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Stops every process and refuses new ones; each one still alive gets a note that it was
   * stopped (for {@linkcode handOver}). Never throws.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const alive = [...this.#records.values()].filter((record) => isAlive(record.info.state));
    await Promise.all([...this.#records.keys()].map((id) => this.#stop(id).catch(() => {})));
    for (const { info } of alive) {
      this.#notes.push(
        `${info.id} was stopped: its sandbox was closed (the session's permissions or settings ` +
          "changed); start it again if it is still needed",
      );
    }
  }

  /**
   * What a closed supervisor leaves to the one that follows it in the same session: the next
   * process id (a new `p1` would be mistaken for the stopped one whose id the model still
   * holds) and the notes no tool result told yet. Takes the notes.
   */
  handOver(): ProcessHandOver {
    return { nextId: this.#next, notes: this.takeNotes(), resumedBelow: this.#resumedBelow };
  }

  /** Goes on from what the supervisor before it handed over: its ids and untold notes. */
  continueFrom(previous: ProcessHandOver): void {
    this.#next = Math.max(this.#next, previous.nextId);
    this.#firstOwn = this.#next;
    this.#resumedBelow = Math.max(this.#resumedBelow, previous.resumedBelow ?? 1);
    this.#notes.unshift(...previous.notes);
  }

  /**
   * Goes on after the ids the session's conversation names ({@linkcode lastProcessNumber}),
   * given by the tern runs before it was resumed, whose processes ended with them: the next
   * process gets the number after, so a model that still holds an old id never reaches a new
   * process with it, and an old id is told as ended before the resume. Ids this run gave
   * already are its own.
   */
  resumeAfter(conversation: Iterable<Message>): void {
    const last = lastProcessNumber(conversation);
    if (last + 1 <= this.#next) return;
    this.#next = last + 1;
    this.#resumedBelow = this.#next;
    this.#firstOwn = this.#next;
  }

  async #start(
    launcher: BackgroundLauncher,
    command: string,
    options: StartOptions,
  ): Promise<ProcessInfo> {
    if (this.#closed) throw new Error("Cannot start a background process: the sandbox is closed");
    if (this.#running() + this.#starting >= MAX_PROCESSES) {
      throw new RangeError(
        `Cannot start a background process: ${MAX_PROCESSES} are running already ` +
          "(stop one with process_stop)",
      );
    }
    this.#starting++;
    let launch: BackgroundLaunch;
    let child: Deno.ChildProcess;
    const token = `tern-ready-${crypto.randomUUID()}`;
    try {
      launch = await launcher(command, { cwd: options.cwd, port: options.port, token });
      try {
        child = spawnProcessGroup(launch.program, {
          args: launch.args,
          cwd: launch.cwd,
          env: launch.env,
          clearEnv: true,
          // The liveness pipe: nothing is written; it reaches end-of-file when tern is gone.
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        });
      } catch (error) {
        launch.release?.();
        throw error;
      }
    } finally {
      this.#starting--;
    }
    // close() ran while this one launched: it must not outlive the sandbox, and is told as
    // stopped, not as running (nor, later, as ended by itself).
    const closed = this.#closed;
    if (closed) {
      await stopLaunch(child, { bubblewrap: launch.confined, livenessPipe: true, graceMs: 0 });
    }
    const id = `p${this.#next++}`;
    const info: ProcessInfo = {
      id,
      command,
      state: closed ? "stopped" : "running",
      ...(options.port !== undefined
        ? { readiness: `port ${options.port}` }
        : options.text !== undefined
        ? { readiness: `text ${JSON.stringify(options.text)}` }
        : {}),
      exitCode: null,
      confined: launch.confined,
      startedAt: performance.now(),
      logChars: 0,
    };
    const log = new LogRing(this.#options.logChars ?? LOG_CHARS);
    let markReady = () => {};
    const ready = new Promise<void>((resolve) => markReady = resolve);
    const record: Managed = {
      info,
      log,
      child,
      ready,
      done: Promise.resolve(),
      waiting: 0,
      markReady: () => {
        if (info.state !== "running") return;
        info.state = "ready";
        markReady();
        if (record.waiting === 0) this.#notes.push(`${id} is ready (${info.readiness})`);
        this.#changed();
      },
    };
    record.done = this.#supervise(record, options.text, token, launch);
    this.#records.set(id, record);
    this.#forgetOld();
    this.#changed();
    return { ...info };
  }

  async #supervise(
    record: Managed,
    text: string | undefined,
    token: string,
    launch: Pick<BackgroundLaunch, "release" | "afterExit">,
  ): Promise<void> {
    const { child, log, info } = record;
    let carry = "";
    const onLog = (piece: string) => {
      log.append(piece);
      info.logChars = log.total;
      if (text !== undefined && text !== "") {
        // The end of the last piece too: the text may arrive split in two.
        const joined = carry + piece;
        if (joined.includes(text)) record.markReady();
        carry = joined.slice(Math.max(0, joined.length - (text.length - 1)));
      }
    };
    const onControl = (piece: string) => {
      // The token alone on a line is the port probe; anything else (bubblewrap's own
      // complaints, before the wrapper runs) belongs in the log.
      for (const line of piece.split("\n")) {
        if (line === token) record.markReady();
        else if (line !== "") onLog(`${line}\n`);
      }
    };
    const readers = [child.stdout.getReader(), child.stderr.getReader()];
    const pumps = Promise.all([pump(readers[0], onLog), pumpLines(readers[1], onControl)]);
    const status = await child.status;
    // What is left of its group (a probe, a watchdog, a job that outlived it) goes with it.
    signalProcessGroup(child.pid, "SIGKILL");
    // And what left the group, where the launch can reach it (its cgroup).
    await launch.afterExit?.();
    await child.stdin.close().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), 1000));
    if (await Promise.race([pumps, late]) === "late") {
      // Outside bubblewrap a process that left the group may hold the pipes: stop reading.
      await Promise.all(readers.map((reader) => reader.cancel().catch(() => {})));
    }
    clearTimeout(timer);
    await pumps.catch(() => {});
    launch.release?.();
    // Deno gives a process killed by signal n the code 128 + n, as a shell would.
    info.exitCode = status.code;
    if (info.state !== "stopped") {
      info.state = "exited";
      if (record.waiting === 0) {
        this.#notes.push(`${info.id} ended by itself (exit code ${info.exitCode})`);
      }
    }
    record.markReady = () => {};
    this.#changed();
  }

  async #wait(
    id: string,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<WaitOutcome> {
    const record = this.#get(id);
    record.waiting++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const outcomes: Promise<WaitOutcome>[] = [
      record.ready.then(() => "ready" as const),
      record.done.then(() => "exited" as const),
      new Promise((resolve) => timer = setTimeout(() => resolve("timeout"), options.timeoutMs)),
    ];
    if (options.signal) {
      const signal = options.signal;
      outcomes.push(
        new Promise((resolve) => {
          onAbort = () => resolve("cancelled");
          if (signal.aborted) onAbort();
          else signal.addEventListener("abort", onAbort, { once: true });
        }),
      );
    }
    try {
      const outcome = await Promise.race(outcomes);
      // Ready and ended in the same moment: ready it was, if it said so.
      return outcome === "exited" && record.info.state === "ready" ? "ready" : outcome;
    } finally {
      record.waiting--;
      clearTimeout(timer);
      if (onAbort) options.signal?.removeEventListener("abort", onAbort);
    }
  }

  #logs(id: string, options: { tail: number; grep?: string }) {
    const { log } = this.#get(id);
    const lines = options.grep === undefined
      ? log.tail(options.tail)
      : log.grep(options.grep, options.tail);
    return { lines, dropped: log.dropped };
  }

  async #stop(id: string): Promise<ProcessInfo> {
    const record = this.#get(id);
    if (record.info.state === "running" || record.info.state === "ready") {
      record.info.state = "stopped";
      await stopLaunch(record.child, {
        bubblewrap: record.info.confined,
        livenessPipe: true,
        graceMs: this.#options.graceMs,
      });
    }
    await record.done;
    return { ...record.info };
  }

  #get(id: string): Managed {
    const record = this.#records.get(id);
    if (record === undefined) throw new RangeError(this.#unknown(id));
    return record;
  }

  /** Why `id` names no process here: what became of it, when it was given before. */
  #unknown(id: string): string {
    const number = /^p([1-9][0-9]{0,14})$/.exec(id)?.[1];
    const n = number === undefined ? Infinity : Number(number);
    const again = "start it again if it is still needed";
    // The model's text, quoted on one line and cut: an id is a few characters.
    const named = JSON.stringify(id.length > 64 ? `${id.slice(0, 64)}…` : id);
    if (n < this.#resumedBelow) {
      return `Cannot find background process ${named}: it ended before this session was ` +
        `resumed (background processes end with the tern run that started them): ${again}`;
    }
    if (n < this.#firstOwn) {
      return `Cannot find background process ${named}: it was stopped when its sandbox was ` +
        `closed (the session's permissions or settings changed): ${again}`;
    }
    if (n < this.#next) {
      return `Cannot find background process ${named}: it ended and is forgotten (the last ` +
        `${MAX_RECORDS} are kept)`;
    }
    const known = [...this.#records.keys()].join(", ") || "none";
    return `Cannot find background process ${named}: known are ${known}`;
  }

  #running(): number {
    return [...this.#records.values()].filter((r) => isAlive(r.info.state)).length;
  }

  #forgetOld(): void {
    for (const [id, record] of this.#records) {
      if (this.#records.size <= MAX_RECORDS) return;
      if (!isAlive(record.info.state)) this.#records.delete(id);
    }
  }

  #changed(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch {
        // A listener's failure is its own.
      }
    }
  }
}

/** A process id as a supervisor gives it (`p<n>`); numbers past 9 digits are not ids. */
const PROCESS_ID = /\bp([1-9][0-9]{0,8})\b/g;

/**
 * The highest process number (`p<n>`) `conversation` names in a tool result or a user message
 * (a compaction's summary is one), 0 when none. Text that only looks like an id (a file's
 * `p12`) can only raise it, which leaves a gap in the ids and is harmless; missing one is not.
 */
export function lastProcessNumber(conversation: Iterable<Message>): number {
  let last = 0;
  for (const message of conversation) {
    if (message.role !== "tool" && message.role !== "user") continue;
    for (const found of message.content.matchAll(PROCESS_ID)) {
      last = Math.max(last, Number(found[1]));
    }
  }
  return last;
}

function isAlive(state: ProcessState): boolean {
  return state === "running" || state === "ready";
}

type Reader = ReadableStreamDefaultReader<Uint8Array>;

async function pump(reader: Reader, onText: (text: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      if (text !== "") onText(text);
    }
  } catch {
    // Cancelled: the process is gone.
  }
  const rest = decoder.decode();
  if (rest !== "") onText(rest);
}

/** Like `pump`, handing on whole lines only (the last one once the stream ends). */
async function pumpLines(reader: Reader, onText: (text: string) => void): Promise<void> {
  let pending = "";
  await pump(reader, (text) => {
    pending += text;
    const end = pending.lastIndexOf("\n");
    if (end < 0) {
      // A line without end that grows past a log's worth is output, not a token.
      if (pending.length > 4096) {
        onText(`${pending}\n`);
        pending = "";
      }
      return;
    }
    onText(pending.slice(0, end + 1));
    pending = pending.slice(end + 1);
  });
  if (pending !== "") onText(pending);
}
