/**
 * A warm shell: one bubblewrap sandbox kept open for a run's shell commands, so a command costs
 * a `bash` start instead of a whole sandbox's. Inside, a small bash server is the sandbox's
 * pid 1 and runs one command at a time, each exactly as a fresh sandbox would run it:
 *
 * - the command is `bash -c "<limits>; exec 2>&1; <command>"` in the call's folder, stdin
 *   `/dev/null`, in the same view (the sandbox is kept only while its bubblewrap arguments stay
 *   the same, see {@linkcode warmKey});
 * - when it ends, the server kills every other process of the sandbox (`kill -KILL -1` from
 *   pid 1 reaches all of them: background jobs, `setsid` or `nohup` ones), waits until they are
 *   gone, and only then writes the end record and reads the next command. No process a
 *   command started lives on into the next one. Files do, as in a shell session: what a command
 *   left in the private `/tmp` (still capped in size), `/run` or `/dev/shm` is there for the
 *   next command in the same view (a changed view is a new sandbox). Nothing is deleted between
 *   commands: a workspace under `/tmp` is bound there too, and no cleanup may reach it.
 *
 * The server's pipes to tern are its own secret: it runs from a copy of bash that only it may
 * execute and nobody may read (mode 0111), so the kernel marks it not dumpable, and a command
 * (same uid, no capabilities) can neither open `/proc/1/fd/*`, read `/proc/1/mem` nor signal
 * it (pid 1 ignores signals it has no handler for). Each end record carries a nonce tern sent
 * with the command, which the command cannot read, so its output cannot fake its end.
 *
 * Timeout and cancel end the whole sandbox (its process group, as a one-shot sandbox's); tern's
 * death closes the server's stdin, and the server exits (or, mid-command, `--die-with-parent`
 * takes it); an unwanted warm shell is closed by closing its stdin, never by a signal while
 * bubblewrap sets up.
 */
import { hostProgram } from "../core/host_programs.ts";
import { killSandboxInit, terminateProcessGroup } from "../core/process_group.ts";
import {
  bwrapArgvFor,
  bwrapProgram,
  hiddenFileIds,
  isAbsentOrEmptyDir,
  launchArgv,
  sandboxEnv,
  withPathLookups,
} from "./bwrap.ts";
import { DEFAULT_LIMITS, ulimitPrefix } from "./limits.ts";
import { OutputBuffer, spawnProcessGroup } from "./process.ts";
import { SHELL_MEMORY_CHARS } from "./shell_runner.ts";
import type { ShellPlan, ShellResult, ShellRunOptions } from "./types.ts";
import { after } from "../core/timer.ts";
import { phaseMark } from "../core/phase_marks.ts";

/** Where the server's program (the unreadable copy of bash) is mounted in the sandbox. */
export const WARM_SERVER_PATH = "/run/.tern-shell";

/** How many `kill -0 -1` rounds the server waits for killed processes to go, at most. */
const REAP_TRIES = 100_000;

/**
 * The server, run as `<server> -c SCRIPT` (pid 1). Records on stdin are three NUL-ended
 * fields: nonce, folder, the `bash -c` script. Before a command starts, data or end-of-file
 * already waiting on stdin means tern is gone (tern sends nothing while a command runs): exit.
 * It refuses to run unless it is pid 1 of its own namespace.
 */
export const WARM_SERVER_SCRIPT: string = [
  // `kill -KILL -1` anywhere but as a pid namespace's init would reach the person's processes.
  '[ "$$" = 1 ] || { echo "tern: the warm shell must run as pid 1" >&2; exit 1; }',

  "while IFS= read -r -d '' n && IFS= read -r -d '' d && IFS= read -r -d '' c; do",
  "  read -t 0 -u 0 && exit 137",
  '  ( cd -- "$d" && exec bash -c "$c" ) </dev/null 2>&1',
  "  s=$?",
  "  kill -KILL -1 2>/dev/null",
  `  for ((i = 0; i < ${REAP_TRIES}; i++)); do kill -0 -1 2>/dev/null || break; wait; done`,
  `  ((i < ${REAP_TRIES})) || exit 137`,

  '  printf \'\\0tern-end %s %d\\n\' "$n" "$s"',
  "done",
].join("\n");

/** Options for {@linkcode openWarmShell}. */
export interface WarmShellOptions {
  /** The unreadable copy of bash (see {@linkcode warmServerFile}). */
  serverFile: string;
  /** The bubblewrap executable; default `bwrap`. */
  bwrapPath?: string;
  /** Between SIGTERM and SIGKILL on timeout or cancel, in milliseconds; default 500. */
  graceMs?: number;
  /** Output characters kept in memory per command (head and tail); default as a one-shot's. */
  memoryChars?: number;
}

/** A sandbox kept open for shell commands; see the module's comment. */
export interface WarmShell {
  /** The bubblewrap arguments it was opened with: reuse it only for a plan with the same. */
  readonly key: string;
  /** A command runs in it now. */
  readonly busy: boolean;
  /** It can take a command (started, not ended, not busy). */
  readonly ready: boolean;
  /**
   * Runs `command` as a one-shot sandbox would (see `createBwrapRunner`). Throws when it is busy
   * or ended before the command could be sent (then run it elsewhere).
   */
  run(command: string, options: ShellRunOptions): Promise<ShellResult>;
  /** Ends it: closes the server's stdin (mid-command: ends its process group). Never throws. */
  close(): Promise<void>;
}

/**
 * What identifies a warm shell's sandbox for `plan`: bubblewrap's arguments, the launcher's and
 * the environment, all as a fresh sandbox would be started now. Null when the plan cannot have
 * a warm shell: commands with host grants (a filtering proxy per command), or no `/run` to
 * mount the server on.
 */
export function warmKey(plan: ShellPlan, bwrapPath = bwrapProgram()): string | null {
  if (plan.proxy !== undefined) return null;
  return withPathLookups(() => {
    const args = bwrapArgvFor(plan, [WARM_SERVER_PATH]);
    if (!hasTmpfsRun(args)) return null;
    // A hidden file the host replaced since would show through the kept sandbox's mount.
    return JSON.stringify([bwrapPath, args, sandboxEnv(plan), hiddenFileIds(plan)]);
  });
}

function hasTmpfsRun(args: readonly string[]): boolean {
  for (let i = 0; i + 1 < args.length; i++) {
    if (args[i] === "--tmpfs" && args[i + 1] === "/run") return true;
  }
  return false;
}

/** Where {@linkcode warmServerFile} puts the server's program in `dir`. */
export function warmServerPath(dir: string): string {
  return `${dir}/shell-server`;
}

/**
 * Makes (or reuses) `<dir>/shell-server`: a copy of the host's `bash` on `path`, mode 0111, so
 * the server that runs from it is not dumpable. Returns its path. Written under a temporary
 * name and renamed into place (several tern processes may share the folder).
 * @throws when bash is not found or the folder cannot be written.
 */
export async function warmServerFile(dir: string, path = "/usr/local/bin:/usr/bin:/bin") {
  const bash = findBash(path);
  const target = warmServerPath(dir);
  const source = await Deno.stat(bash);
  try {
    const current = await Deno.lstat(target);
    const mode = (current.mode ?? 0) & 0o7777;
    if (
      current.isFile && mode === 0o111 && current.size === source.size &&
      (current.mtime?.getTime() ?? 0) >= (source.mtime?.getTime() ?? Infinity)
    ) return target;
  } catch {
    // Not made yet.
  }
  const temporary = `${target}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.copyFile(bash, temporary);
    await Deno.chmod(temporary, 0o111);
    await Deno.rename(temporary, target);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
  return target;
}

/**
 * bash's real path, found on `path` as tern finds the programs it starts on the host: never one in
 * a folder sandboxed commands may write (host_programs.ts), which would otherwise become the
 * init of every later sandbox.
 */
function findBash(path: string): string {
  return Deno.realPathSync(hostProgram("bash", path));
}

/**
 * Starts a warm shell for `plan` (the server begins as soon as bubblewrap has set up; the first
 * command waits for that). Throws only when bubblewrap cannot be started at all.
 */
export function openWarmShell(plan: ShellPlan, options: WarmShellOptions): WarmShell {
  const key = warmKey(plan, options.bwrapPath);
  if (key === null) throw new TypeError("Cannot open a warm shell: the plan needs a proxy or /run");
  const launch = warmLaunch(plan, options.serverFile, options.bwrapPath);
  phaseMark("warm_shell");
  const child = spawnProcessGroup(launch.program, {
    args: launch.args,
    cwd: "/",
    env: sandboxEnv(plan),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
  return new Server(key, child, commandPrefix(plan), options);
}

/**
 * The program and arguments that start a warm shell for `plan` (see `launchArgv`): bubblewrap
 * with the plan's view, `serverFile` mounted at {@linkcode WARM_SERVER_PATH}, `--as-pid-1`, and
 * the server's script.
 */
export function warmLaunch(
  plan: ShellPlan,
  serverFile: string,
  bwrapPath?: string,
): { program: string; args: string[] } {
  const args = bwrapArgvFor(plan, [WARM_SERVER_PATH, "-c", WARM_SERVER_SCRIPT]);
  const at = args.lastIndexOf("--chdir");
  args.splice(at, 0, "--ro-bind", serverFile, WARM_SERVER_PATH, "--as-pid-1");
  return launchArgv(plan, args, bwrapPath);
}

/**
 * The head of each command's script: its limits, as `shellPrefix` without the liveness pipe (the
 * run's cgroups the launcher joined before bubblewrap started: see `launchArgv`).
 */
function commandPrefix(plan: ShellPlan): string {
  return ulimitPrefix(plan.limits ?? DEFAULT_LIMITS);
}

/** The command under way: where its output goes and how it ends. */
interface Current {
  nonce: string;
  buffer: OutputBuffer;
  onOutput?: (text: string) => void;
  finish(code: number, signal: Deno.Signal | null): void;
}

class Server implements WarmShell {
  readonly key: string;
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #prefix: string;
  #options: WarmShellOptions;
  #current: Current | null = null;
  #pending = "";
  #stderr = "";
  #ended = false;
  #closing: Promise<void> | null = null;
  #reading: Promise<void>;

  constructor(key: string, child: Deno.ChildProcess, prefix: string, options: WarmShellOptions) {
    this.key = key;
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#prefix = prefix;
    this.#options = options;
    this.#reading = Promise.all([this.#readOutput(), this.#readErrors()]).then(() => {});
    child.status.then((status) => this.#onExit(status), () => this.#onExit(null));
  }

  get busy(): boolean {
    return this.#current !== null;
  }

  get ready(): boolean {
    return !this.#ended && this.#closing === null && this.#current === null;
  }

  async run(command: string, options: ShellRunOptions): Promise<ShellResult> {
    if (!this.ready) throw new Error("Cannot run in the warm shell: it is busy or ended");
    if (command.includes("\0") || options.cwd.includes("\0")) {
      throw new TypeError("Cannot run a command or folder that contains a NUL character");
    }
    const nonce = crypto.randomUUID();
    const buffer = new OutputBuffer(this.#options.memoryChars ?? SHELL_MEMORY_CHARS);
    let reason: "timeout" | "cancel" | null = null;
    const done = new Promise<{ code: number; signal: Deno.Signal | null }>((resolve) => {
      this.#current = {
        nonce,
        buffer,
        onOutput: options.onOutput,
        finish: (code, signal) => {
          this.#current = null;
          resolve({ code, signal });
        },
      };
    });
    const stop = (why: "timeout" | "cancel") => {
      if (reason !== null) return;
      reason = why;
      this.#terminate();
    };
    const onAbort = () => stop("cancel");
    const timer = options.timeoutMs === undefined
      ? undefined
      : after(options.timeoutMs, () => stop("timeout"));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    try {
      const script = `${this.#prefix}exec 2>&1; ${command}`;
      const record = `${nonce}\0${options.cwd}\0${script}\0`;
      await this.#writer.write(new TextEncoder().encode(record)).catch(() => {});
      const { code, signal } = await done;
      return {
        output: buffer.text(),
        totalChars: buffer.total,
        code,
        signal,
        timedOut: reason === "timeout",
        cancelled: reason === "cancel",
      };
    } finally {
      timer?.cancel();
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#current !== null) this.#terminate();
      await this.#writer.close().catch(() => {});
      await this.#child.status.catch(() => {});
      await this.#reading;
    })();
    return this.#closing;
  }

  #terminate(): void {
    // End of input first: bubblewrap killed while it sets up can leave the sandbox's init
    // running without --die-with-parent armed; the server then finds the command's record
    // followed by end-of-file, and exits instead of running it (its liveness check).
    this.#writer.close().catch(() => {});
    // And the sandbox's init itself (bubblewrap's child, pid 1 inside): a SIGKILL from outside
    // ends its whole pid namespace, whether or not its --die-with-parent was armed yet.
    killSandboxInit(this.#child.pid);
    terminateProcessGroup(this.#child.pid, this.#child.status, this.#options.graceMs)
      .catch(() => {});
  }

  async #readOutput(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const bytes of this.#child.stdout) {
      this.#take(decoder.decode(bytes, { stream: true }));
    }
    this.#take(decoder.decode());
  }

  async #readErrors(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const bytes of this.#child.stderr) {
      this.#stderr = (this.#stderr + decoder.decode(bytes, { stream: true })).slice(-8192);
    }
  }

  /** Output of the current command, up to its end record. */
  #take(text: string): void {
    const current = this.#current;
    if (current === null) return; // Nothing runs: nothing may print (the server is silent).
    this.#pending += text;
    const head = `\0tern-end ${current.nonce} `;
    const at = this.#pending.indexOf(head);
    if (at >= 0) {
      const end = this.#pending.indexOf("\n", at);
      if (end < 0) {
        this.#emit(current, this.#pending.slice(0, at));
        this.#pending = this.#pending.slice(at);
        return;
      }
      this.#emit(current, this.#pending.slice(0, at));
      const code = Number(this.#pending.slice(at + head.length, end));
      this.#pending = "";
      current.finish(Number.isInteger(code) ? code : 1, null);
      return;
    }
    // Keep what could be the start of the end record (from a NUL on); the rest is the command's.
    const nul = this.#pending.lastIndexOf("\0");
    const keepFrom = nul >= 0 && this.#pending.length - nul < head.length
      ? nul
      : this.#pending.length;
    this.#emit(current, this.#pending.slice(0, keepFrom));
    this.#pending = this.#pending.slice(keepFrom);
  }

  #emit(current: Current, text: string): void {
    if (text === "") return;
    current.buffer.append(text);
    current.onOutput?.(text);
  }

  #onExit(status: Deno.CommandStatus | null): void {
    this.#ended = true;
    const current = this.#current;
    if (current === null) return;
    // The sandbox ended mid-command (stopped, or it could not start): what it printed is the
    // command's output, its exit the command's.
    this.#reading.then(() => {
      if (this.#current !== current) return;
      this.#emit(current, this.#pending + this.#stderr);
      this.#pending = "";
      this.#stderr = "";
      const code = status?.code ?? 1;
      current.finish(code, status?.signal ?? null);
    });
  }
}

/**
 * The one warm shell of a sandbox runtime: opened for the first command a warm shell can run,
 * kept while the commands' bubblewrap arguments stay the same, replaced when they change.
 * A command that comes while it is busy (commands running side by side) runs in a one-shot
 * sandbox instead.
 *
 * The guards bubblewrap mounts on absent or empty `.git`/`.tern` folders stand on empty folders
 * on the host: the slot holds them while its shell lives (removing one would unmount the guard
 * inside), and checks before each command that each is still an empty folder; when one is not,
 * the shell is replaced.
 */
export class WarmSlot {
  #dir: string;
  #bwrapPath: string | undefined;
  #shell: WarmShell | null = null;
  #held: string[] = [];
  /** The read-only paths of the plan the shell was opened with. */
  #openedReadOnly: readonly string[] = [];
  /** Keys other than the shell's own found to show the same view (see `#sameView`). */
  #sameViewKeys = new Set<string>();
  #released: string[] = [];
  /** A guard of the shell was found gone (see {@linkcode lost}). */
  #lost = false;
  /** The taking under way (see `#take`). */
  #taking: Promise<unknown> = Promise.resolve();
  #closed = false;

  #makeMountPoints: (paths: readonly string[]) => Promise<void>;

  /**
   * `dir`: where the server's program is made (never where a command can write);
   * `makeMountPoints` makes the guards' absent mount points (by default {@linkcode
   * makeMountPoints}); when it throws, no shell opens and `run` throws that error.
   */
  constructor(
    dir: string,
    bwrapPath?: string,
    options: { makeMountPoints?: (paths: readonly string[]) => Promise<void> } = {},
  ) {
    this.#dir = dir;
    this.#bwrapPath = bwrapPath;
    this.#makeMountPoints = options.makeMountPoints ?? makeMountPoints;
  }

  /**
   * Runs `command` of `plan` in the warm shell, opened or replaced as needed; null when it
   * should run in a one-shot sandbox instead (no warm shell for this plan, or it is busy).
   */
  async run(
    plan: ShellPlan,
    command: string,
    options: ShellRunOptions,
  ): Promise<ShellResult | null> {
    if (command.includes("\0") || options.cwd.includes("\0")) return null;
    const shell = await this.#take(plan);
    // Another command may have taken it since: checked and taken in the same step.
    if (shell === null || !shell.ready) return null;
    return await shell.run(command, options);
  }

  /**
   * Opens the warm shell for `plan` ahead of its first command (bubblewrap sets up while the
   * model answers). Never throws.
   */
  async prewarm(plan: ShellPlan): Promise<void> {
    if (this.#shell === null) await this.#take(plan).catch(() => null);
  }

  /**
   * The shell for `plan`, opened or replaced as needed; one taking at a time, so a command that
   * comes while the prewarmed shell is being opened gets that shell, not a one-shot sandbox.
   */
  #take(plan: ShellPlan): Promise<WarmShell | null> {
    const taken = this.#taking.then(() => this.#takeNow(plan));
    this.#taking = taken.catch(() => {});
    return taken;
  }

  async #takeNow(plan: ShellPlan): Promise<WarmShell | null> {
    const key = warmKey(plan, this.#bwrapPath);
    if (key === null || this.#closed) return null;
    const shell = this.#shell;
    if (shell?.busy) return null;
    if (
      shell?.ready && !this.#lost && this.#sameView(shell.key, key, plan) &&
      this.#held.every(isEmptyDir)
    ) {
      return shell;
    }
    if (shell !== null) await this.#discard();
    // Checked at each opening: another tern sharing the folder may have replaced it.
    const serverFile = await warmServerFile(this.#dir, plan.env.PATH).catch(() => null);
    if (serverFile === null || this.#shell !== null) return null;
    const held = (plan.guarded ?? []).filter(isAbsentOrEmptyDir);
    // The guards' mount points are made here, not left to bubblewrap: a command that comes
    // while it still sets up finds them, and the shell is not taken for one whose guard went.
    await this.#makeMountPoints(held);
    if (this.#shell !== null) return null;
    this.#held = held;
    this.#lost = false;
    this.#openedReadOnly = plan.readOnly;
    this.#sameViewKeys.clear();
    this.#shell = openWarmShell(plan, { serverFile, bwrapPath: this.#bwrapPath });
    return this.#shell;
  }

  /**
   * Whether a shell opened with `opened` shows what `plan` (whose key is `key`) would. Its
   * guards' mount points, which bubblewrap made, may be in `plan.readOnly` now (the `.git`
   * search finds an empty `.git`), bound read-only under the same empty read-only tmpfs: the
   * same view, so those the opening plan did not have are left out. (Those it had, such as
   * `.tern`, were in its key already.)
   */
  #sameView(opened: string, key: string, plan: ShellPlan): boolean {
    if (opened === key || this.#sameViewKeys.has(key)) return true;
    const readOnly = plan.readOnly.filter((path) =>
      !this.#held.includes(path) || this.#openedReadOnly.includes(path)
    );
    const same = readOnly.length < plan.readOnly.length &&
      opened === warmKey({ ...plan, readOnly }, this.#bwrapPath);
    // The answer depends on the key alone (the held paths are the shell's): the next command
    // with this key, after every writing command, does not build the arguments twice.
    if (same) this.#sameViewKeys.add(key);
    return same;
  }

  /**
   * Tells the slot that `paths` were found absent (and made again): a shell standing on one has
   * lost that guard (removing the folder unmounted it inside), so it is not used again.
   */
  lost(paths: readonly string[]): void {
    if (paths.some((path) => this.#held.includes(path))) this.#lost = true;
  }

  /** Whether `path` is a guard's placeholder that the open shell stands on. */
  holds(path: string): boolean {
    return this.#shell !== null && this.#held.includes(path);
  }

  /** Placeholders of shells ended since the last call: remove them once no command runs. */
  released(): string[] {
    const released = this.#released;
    this.#released = [];
    return released;
  }

  /** Ends the shell; returns the placeholders it held (see {@linkcode released}). */
  async close(): Promise<string[]> {
    this.#closed = true;
    // A taking under way finishes first: a shell it opens is discarded here, not left behind.
    await this.#taking;
    if (this.#shell !== null) await this.#discard();
    return this.released();
  }

  async #discard(): Promise<void> {
    const shell = this.#shell;
    this.#shell = null;
    this.#released.push(...this.#held);
    this.#held = [];
    await shell?.close();
  }
}

/**
 * An empty folder at each of `paths` unless something is there already (bubblewrap mounts on
 * it). tern's own process may not write the workspace (bin/_env.sh gives it no such grant), so
 * what it cannot make itself is made by `mkdir`, as `rmdir` removes them (runtime.ts). Never
 * throws: a path it could not make shows in `isEmptyDir`, and bubblewrap then fails as it would
 * have.
 */
export async function makeMountPoints(paths: readonly string[]): Promise<void> {
  const refused: string[] = [];
  for (const path of paths) {
    try {
      Deno.mkdirSync(path);
    } catch (error) {
      if (
        error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied
      ) {
        refused.push(path);
      }
    }
  }
  if (refused.length === 0) return;
  // Not `-p`: only the last part is made, never a folder above it, and never through a link.
  try {
    await new Deno.Command(hostProgram("mkdir"), {
      args: ["--", ...refused],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
  } catch {
    // The guard is then not made: the file tools refuse .tern and .git all the same.
  }
}

function isEmptyDir(path: string): boolean {
  try {
    if (!Deno.lstatSync(path).isDirectory) return false;
    for (const _ of Deno.readDirSync(path)) return false;
    return true;
  } catch {
    return false;
  }
}
