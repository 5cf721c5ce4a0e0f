/**
 * Running a command in its own process group, so that a timeout or a cancel ends everything it
 * started (children, grandchildren, background jobs), and the environment it may see. Shared by
 * the `bash` tool and the sandbox, which wraps the same command in bubblewrap.
 */
import { cutBack } from "../core/code_points.ts";
import {
  killSandboxInit,
  signalProcessGroup,
  spawnProcessGroup,
  terminateProcessGroup,
} from "../core/process_group.ts";

export {
  killSandboxInit,
  signalProcessGroup,
  spawnProcessGroup,
  terminateProcessGroup,
} from "../core/process_group.ts";

/** Variables passed through to commands (plus every `LC_*`), unless the name looks secret. */
export const SAFE_ENV_NAMES: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "TERM",
  "TMPDIR",
  "SHELL",
  "TZ",
];

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD/i;
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The allow-listed part of `source` (default: this process's environment, or nothing when
 * reading it is not permitted). A name matching /KEY|TOKEN|SECRET|PASSWORD/i never passes.
 * PATH gets a default when absent.
 */
export function safeEnv(source?: Record<string, string>): Record<string, string> {
  const from = source ?? readEnv();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) {
    const allowed = SAFE_ENV_NAMES.includes(name) || name.startsWith("LC_");
    if (allowed && !SECRET_NAME.test(name)) env[name] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  return env;
}

function readEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}

/** Options for {@linkcode runInProcessGroup}. */
export interface ProcessGroupOptions {
  args?: string[];
  cwd: string;
  /** The complete environment; nothing else is inherited. */
  env: Record<string, string>;
  /** Stop the group after this many milliseconds. */
  timeoutMs?: number;
  /** Stop the group when this fires. */
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL, in milliseconds; default 500. */
  graceMs?: number;
  /** Called with each piece of output as it arrives. */
  onOutput?: (text: string) => void;
  /** Output characters kept in memory (first half and last half); default 2,000,000. */
  memoryChars?: number;
  /**
   * Give the command a pipe as stdin that nothing is ever written to and that closes only when
   * tern does: a read end that reaches end-of-file tells a process tern has died (see
   * `LIVENESS_FD` in bwrap.ts). Default false: stdin is closed.
   */
  livenessPipe?: boolean;
  /**
   * The program is a bubblewrap launch: a timeout or a cancel first closes the liveness pipe
   * (a command whose sandbox is still being set up then exits at its start) and kills the
   * sandbox's init (see `killSandboxInit`), then stops the group. Default false.
   */
  bubblewrap?: boolean;
  /**
   * Called once the leader has exited and its group was killed, before the output drains: ends
   * what left the group (a command's cgroup). Must not throw.
   */
  afterExit?: () => Promise<void>;
}

/** How a command in a process group ended. */
export interface ProcessGroupResult {
  /** stdout and stderr interleaved as they arrived; the middle is dropped past `memoryChars`. */
  output: string;
  /** Characters printed in total, including any dropped ones. */
  totalChars: number;
  /** Exit code of the leader (128 + n when killed by signal n). */
  code: number;
  /** The signal that ended the leader, if one did. */
  signal: Deno.Signal | null;
  timedOut: boolean;
  cancelled: boolean;
}

/** How long output pipes may stay open after the group is gone (a process that left the group). */
const DRAIN_MS = 1000;

/**
 * Runs `command` in a new process group (pgid = pid, see `spawnProcessGroup`) with stdin closed (or a
 * liveness pipe, see `livenessPipe`). On timeout
 * or abort the whole group gets SIGTERM, then SIGKILL; when the leader exits by itself, what
 * is left of its group (background jobs) is killed. Never leaves a process of the group
 * behind. Throws only when the command cannot be started.
 */
export async function runInProcessGroup(
  command: string,
  options: ProcessGroupOptions,
): Promise<ProcessGroupResult> {
  const child = spawnProcessGroup(command, {
    args: options.args ?? [],
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: options.livenessPipe ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  });
  const buffer = new OutputBuffer(options.memoryChars ?? 2_000_000);
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const pumps = Promise.all(readers.map((reader) => pump(reader, buffer, options.onOutput)));

  let reason: "timeout" | "cancel" | null = null;
  let stopping: Promise<void> = Promise.resolve();
  const stop = (why: "timeout" | "cancel") => {
    if (reason !== null) return;
    reason = why;
    stopping = stopLaunch(child, options);
  };
  const onAbort = () => stop("cancel");
  const timer = options.timeoutMs === undefined
    ? undefined
    : setTimeout(() => stop("timeout"), options.timeoutMs);
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const status = await child.status;
    clearTimeout(timer);
    await stopping;
    // Whatever is left of the group are background jobs holding our pipes: end them.
    signalProcessGroup(child.pid, "SIGKILL");
    if (options.afterExit) await options.afterExit();
    await drain(pumps, readers);
    return {
      output: buffer.text(),
      totalChars: buffer.total,
      code: status.code,
      signal: status.signal,
      timedOut: reason === "timeout",
      cancelled: reason === "cancel",
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    if (options.livenessPipe) await child.stdin.close().catch(() => {});
  }
}

type Reader = ReadableStreamDefaultReader<Uint8Array>;

async function pump(reader: Reader, buffer: OutputBuffer, onOutput?: (text: string) => void) {
  const decoder = new TextDecoder();
  const emit = (text: string) => {
    if (text === "") return;
    buffer.append(text);
    onOutput?.(text);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    emit(decoder.decode(value, { stream: true }));
  }
  emit(decoder.decode());
}

async function drain(pumps: Promise<unknown>, readers: Reader[]): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) =>
    timer = setTimeout(() => resolve("late"), DRAIN_MS)
  );
  const outcome = await Promise.race([pumps, late]);
  clearTimeout(timer);
  if (outcome === "late") await Promise.all(readers.map((reader) => reader.cancel()));
  await pumps;
}

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();

/**
 * Keeps the first `limit / 2` characters of a stream of text and its last `limit / 2` bytes of
 * UTF-8 (as many characters for ASCII text). The end is kept as bytes in a ring, not as the
 * pieces of text that arrived: a piece kept a while outlives V8's young generation and is copied
 * to the old one, so a command that prints 50 MB left 50 MB of old garbage behind (a process of
 * 170 MB, against 85 MB this way).
 */
export class OutputBuffer {
  #half: number;
  #head = "";
  /** The last bytes written, `#written % #ring.length` being where the next one goes. */
  #ring: Uint8Array | undefined;
  #written = 0;
  /** Where a piece is encoded before it goes into the ring. */
  #scratch = new Uint8Array(0);
  total = 0;

  constructor(limit: number) {
    this.#half = Math.max(1, Math.floor(limit / 2));
  }

  append(text: string): void {
    this.total += text.length;
    if (this.#ring === undefined) {
      // A surrogate pair is not split: its first half goes with the rest.
      const room = cutBack(text, this.#half - this.#head.length);
      this.#head += text.slice(0, room);
      text = text.slice(room);
      if (text === "") return;
      this.#ring = new Uint8Array(this.#half);
    }
    // A character takes a byte at least: only the last `#half` of them can stay.
    if (text.length > this.#half) text = text.slice(text.length - this.#half);
    if (this.#scratch.length < text.length * 3) this.#scratch = new Uint8Array(text.length * 3);
    const { written } = utf8.encodeInto(text, this.#scratch);
    this.#keep(this.#scratch.subarray(0, written));
  }

  #keep(bytes: Uint8Array): void {
    const ring = this.#ring!;
    const kept = bytes.subarray(Math.max(0, bytes.length - ring.length));
    this.#written += bytes.length - kept.length;
    const at = this.#written % ring.length;
    const first = Math.min(kept.length, ring.length - at);
    ring.set(kept.subarray(0, first), at);
    ring.set(kept.subarray(first), 0);
    this.#written += kept.length;
  }

  text(): string {
    const ring = this.#ring;
    let bytes: Uint8Array = new Uint8Array(0);
    if (ring !== undefined && this.#written <= ring.length) bytes = ring.subarray(0, this.#written);
    else if (ring !== undefined) {
      const at = this.#written % ring.length;
      bytes = new Uint8Array(ring.length);
      bytes.set(ring.subarray(at));
      bytes.set(ring.subarray(0, at), ring.length - at);
      // The ring may begin inside a character: its continuation bytes go with what was dropped.
      let start = 0;
      while (start < 3 && start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
      bytes = bytes.subarray(start);
    }
    const tail = utf8Text.decode(bytes);
    const dropped = this.total - this.#head.length - tail.length;
    if (dropped <= 0) return this.#head + tail;
    return `${this.#head}\n[... ${dropped} characters dropped ...]\n${tail}`;
  }
}

/**
 * Stops a launched process and its group. A bubblewrap launch's sandbox may still be setting
 * up, when bubblewrap's death alone would leave it running: its liveness pipe (stdin, with
 * `livenessPipe`) closes first, before the init is looked for, so a sandbox that bubblewrap
 * makes after the look finds end-of-file there and its command exits at its start; then the
 * sandbox's init is killed (see `killSandboxInit`), then the group: SIGTERM, and `graceMs` to end
 * by itself before SIGKILL. Never throws.
 */
export async function stopLaunch(
  child: Deno.ChildProcess,
  options: Pick<ProcessGroupOptions, "bubblewrap" | "livenessPipe" | "graceMs">,
): Promise<void> {
  if (options.bubblewrap) {
    if (options.livenessPipe) await child.stdin.close().catch(() => {});
    killSandboxInit(child.pid);
  }
  await terminateProcessGroup(child.pid, child.status, options.graceMs);
}
