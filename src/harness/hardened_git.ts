/**
 * Runs git on a repository whose own configuration is not trusted: a repository can name
 * programs in `.git/config` (fsmonitor, hooks, external diff, textconv, filter drivers) that
 * ordinary read-only-looking commands start. Every run here switches those off, passes git a
 * bare environment, closes stdin (or writes the given input), caps stdout and kills the process
 * group after a timeout.
 */
import { hostSearchPath } from "../core/host_programs.ts";
import { signalProcessGroup, spawnProcessGroup } from "../sandbox/process.ts";
import { after } from "../core/timer.ts";
import { readCapped } from "../core/read_capped.ts";

/** The environment git may see besides the switches below. */
export interface GitEnvironment {
  PATH: string;
  /** So that the person's own ~/.gitconfig applies; none when undefined. */
  HOME?: string;
}

/** Options of {@linkcode runGit}. */
export interface GitRunOptions {
  cwd: string;
  env: GitEnvironment;
  /** `GIT_INDEX_FILE`: an index to read and write instead of the repository's. */
  indexFile?: string;
  /**
   * Config set with the strength of `-c`, as key/value pairs passed through
   * `GIT_CONFIG_KEY_<n>` (a key there is never split at "=", unlike `-c key=value`).
   */
  config?: readonly (readonly [string, string])[];
  /** Bytes of stdout kept; past it git is killed and `truncated` is set. Default 8 MiB. */
  maxBytes?: number;
  /** Milliseconds before the process group is killed. Default 10,000. */
  timeoutMs?: number;
  /**
   * A repository of tern's own (`GIT_DIR`) over `workTree` (`GIT_WORK_TREE`): git then reads
   * no repository of the project, and no global config (`GIT_CONFIG_GLOBAL=/dev/null`) or
   * system attributes either, so the project's config, hooks and attribute drivers never apply.
   */
  isolated?: { gitDir: string; workTree: string };
  /**
   * An object store of tern's own that new objects are written to (`GIT_OBJECT_DIRECTORY`),
   * with the repository's store read beside it (`GIT_ALTERNATE_OBJECT_DIRECTORIES`): git then
   * writes nothing into the repository, whose `.git` commands can read.
   */
  objects?: { dir: string; alternate: string };
  /** Bytes written to git's stdin, which is then closed (default: no stdin at all). */
  input?: Uint8Array;
  /**
   * A program that starts git for this run, ending with git's absolute path (a bubblewrap view:
   * rewind/view.ts); git then runs as `<launcher...> <hardening> <args>`, from `/` (the launcher
   * sets the folder).
   */
  launcher?: readonly string[];
  /** Kills the process group when aborted (the result's code is then a kill's). */
  signal?: AbortSignal;
}

/** How one git run ended. */
export interface GitResult {
  code: number;
  stdout: Uint8Array;
  /** The first 4 KiB of stderr, decoded and trimmed. */
  stderr: string;
  /** stdout went past `maxBytes`: `stdout` holds its first `maxBytes` bytes. */
  truncated: boolean;
  timedOut: boolean;
}

/**
 * Programs a repository's config could make git start, each switched off for every run. No
 * transport or remote helper may start either (`protocol.allow=never` here, and
 * `GIT_ALLOW_PROTOCOL` and `GIT_NO_LAZY_FETCH` in the environment): a partial clone's missing
 * object would otherwise be fetched from a "promisor" remote whose `uploadpack`, `ext::` URL,
 * `sshCommand`, proxy or credential helper the repository chooses. Submodules are shown as
 * commit ids only: `diff.submodule=diff` would run git inside a nested repository, whose own
 * config (external diff drivers included) the switches here do not reach.
 */
const HARDENING = [
  "--no-pager",
  // Paths are always literal paths, never globs or pathspec magic.
  "--literal-pathspecs",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "diff.external=",
  "-c",
  "core.pager=cat",
  "-c",
  "protocol.allow=never",
  "-c",
  "diff.submodule=short",
  "-c",
  "submodule.recurse=false",
  "-c",
  "status.submoduleSummary=false",
  // The rest keep our own files and output predictable.
  "-c",
  "core.splitIndex=false",
  "-c",
  "core.quotePath=false",
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
  "-c",
  "diff.noprefix=false",
  "-c",
  "diff.mnemonicPrefix=false",
  "-c",
  "diff.relative=false",
];
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;
const STDERR_BYTES = 4096;

/**
 * Signals a terminal sends to every process of its foreground group (Ctrl-C, a hangup) or a
 * person sends to a group. git runs in a session of its own, but only from the moment `setsid`
 * runs (process.ts): one sent to tern's group just before reaches git too. tern itself never
 * sends git these (it kills with SIGKILL).
 */
const GROUP_SIGNALS: ReadonlySet<Deno.Signal> = new Set(["SIGINT", "SIGHUP", "SIGTERM", "SIGQUIT"]);

/**
 * Runs `git <hardening> <args>` in `options.cwd`. Returns undefined when git cannot be started
 * (not on `PATH`, or not permitted); never leaves a process behind. A run ended by a signal of
 * {@linkcode GROUP_SIGNALS} that was not aborted runs once more: that signal was meant for tern,
 * which chose to go on (a rewind finishes its restore first), so git's part of it goes on too.
 */
export async function runGit(
  args: readonly string[],
  options: GitRunOptions,
): Promise<GitResult | undefined> {
  const first = await runGitOnce(args, options);
  const again = first?.signal != null && GROUP_SIGNALS.has(first.signal) && !first.timedOut &&
    !options.signal?.aborted;
  const result = again ? await runGitOnce(args, options) : first;
  if (result === undefined) return undefined;
  const { signal: _, ...ended } = result;
  return ended;
}

/** One run of {@linkcode runGit}, with the signal that ended it. */
async function runGitOnce(
  args: readonly string[],
  options: GitRunOptions,
): Promise<(GitResult & { signal: Deno.Signal | null }) | undefined> {
  const env: Record<string, string> = {
    // What git starts in turn (a credential helper, ssh) is not the workspace's either.
    PATH: hostSearchPath(options.env.PATH),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    // Overrides every `protocol.<name>.allow` a repository sets: the empty list allows none.
    GIT_ALLOW_PROTOCOL: "",
    // git 2.45 and later: a missing object is an error, never a fetch.
    GIT_NO_LAZY_FETCH: "1",
  };
  if (options.env.HOME !== undefined) env.HOME = options.env.HOME;
  if (options.indexFile !== undefined) env.GIT_INDEX_FILE = options.indexFile;
  if (options.objects !== undefined) {
    env.GIT_OBJECT_DIRECTORY = options.objects.dir;
    env.GIT_ALTERNATE_OBJECT_DIRECTORIES = options.objects.alternate;
  }
  if (options.isolated !== undefined) {
    env.GIT_DIR = options.isolated.gitDir;
    env.GIT_WORK_TREE = options.isolated.workTree;
    env.GIT_CONFIG_GLOBAL = "/dev/null";
    env.GIT_ATTR_NOSYSTEM = "1";
    env.GIT_NO_REPLACE_OBJECTS = "1";
    // glibc hands freed memory back after every file and takes it again for the next: on
    // thousands of files that costs more than the hashing (bench/results/rewind.md).
    env.GLIBC_TUNABLES = "glibc.malloc.top_pad=67108864:glibc.malloc.trim_threshold=134217728";
    delete env.HOME;
  }
  const config = options.config ?? [];
  if (config.length > 0) {
    env.GIT_CONFIG_COUNT = String(config.length);
    config.forEach(([key, value], index) => {
      env[`GIT_CONFIG_KEY_${index}`] = key;
      env[`GIT_CONFIG_VALUE_${index}`] = value;
    });
  }
  let child: Deno.ChildProcess;
  try {
    const [program, ...before] = options.launcher ?? ["git"];
    child = spawnProcessGroup(program, {
      args: [...before, ...HARDENING, ...args],
      cwd: options.launcher === undefined ? options.cwd : "/",
      env,
      clearEnv: true,
      stdin: options.input === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    });
  } catch (error) {
    const unavailable = error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
    if (unavailable) return undefined;
    throw error;
  }
  let timedOut = false;
  const kill = () => signalProcessGroup(child.pid, "SIGKILL");
  const timer = after(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, () => {
    timedOut = true;
    kill();
  });
  if (options.signal?.aborted) kill();
  options.signal?.addEventListener("abort", kill, { once: true });
  try {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    // Written alongside the reads: git may fill its output before it has read all its input.
    const writing = options.input === undefined
      ? Promise.resolve()
      : writeAll(child.stdin, options.input);
    const [stdout, stderr] = await Promise.all([
      readCapped(child.stdout, maxBytes, kill),
      readCapped(child.stderr, STDERR_BYTES),
    ]);
    const status = await child.status;
    await writing;
    return {
      code: status.code,
      stdout: stdout.bytes,
      stderr: new TextDecoder().decode(stderr.bytes).trim(),
      truncated: stdout.truncated,
      timedOut,
      signal: status.signal,
    };
  } finally {
    timer.cancel();
    options.signal?.removeEventListener("abort", kill);
    // Whatever git started and left behind goes with it.
    signalProcessGroup(child.pid, "SIGKILL");
  }
}

/** Writes `bytes` to `stream` and closes it; a reader that went away is no error. */
async function writeAll(stream: WritableStream<Uint8Array>, bytes: Uint8Array): Promise<void> {
  const writer = stream.getWriter();
  try {
    await writer.write(bytes);
    await writer.close();
  } catch {
    // git exited (or was killed) before reading everything: its exit code tells.
  }
}
