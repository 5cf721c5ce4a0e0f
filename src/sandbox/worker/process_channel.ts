/** The process backend: the worker is a `deno run` child speaking JSON lines. */
import { safeEnv, signalProcessGroup, spawnProcessGroup } from "../process.ts";
import type { Grants } from "../types.ts";
import type { Channel, ChannelListener } from "./channel.ts";
import { encodeLine, type HostMessage, parseChildMessage, readJsonLines } from "./protocol.ts";

/** Variables the deno executable itself may need to find its cache and run. */
const RUNTIME_NAMES = ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"];

/** Characters of the worker's stderr kept for error messages. */
const STDERR_TAIL_CHARS = 2000;

/**
 * The complete environment of a worker process, built from `source`: the variables deno
 * needs to run (PATH, HOME, DENO_DIR, XDG_CACHE_HOME), variables the grants name, and for
 * env "all" the allow-listed ones of `safeEnv`. Nothing else passes, so API keys stay out
 * unless a grant names them. `NO_COLOR` and `DENO_NO_UPDATE_CHECK` are set; with
 * `auditFile`, `DENO_AUDIT_PERMISSIONS` too.
 */
export function workerEnv(
  source: Record<string, string>,
  grants: Grants,
  auditFile?: string,
): Record<string, string> {
  const env: Record<string, string> = grants.env === "all" ? safeEnv(source) : {};
  const names = grants.env === "all" ? RUNTIME_NAMES : [...RUNTIME_NAMES, ...grants.env];
  for (const name of names) {
    if (source[name] !== undefined) env[name] = source[name];
  }
  env.NO_COLOR = "1";
  env.DENO_NO_UPDATE_CHECK = "1";
  // tern has no package.json: one a command created at the checkout's root is not read.
  env.DENO_NO_PACKAGE_JSON = "1";
  if (auditFile !== undefined) env.DENO_AUDIT_PERMISSIONS = auditFile;
  return env;
}

/** Sets the parent-death signal and execs the worker (util-linux; on PATH or here). */
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find(isFile) ?? "setpriv";

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** How to start a worker process. */
export interface ProcessChannelOptions {
  /** The executable: deno, or bubblewrap when the worker runs in its view. */
  denoPath: string;
  /** Everything after the executable (see `workerRunArgs`). */
  args: string[];
  /** The worker's working directory: the workspace. */
  cwd: string;
  /** The complete environment (see {@linkcode workerEnv}). */
  env: Record<string, string>;
}

/**
 * Starts a worker process in a process group of its own (so Ctrl-C on the terminal does not
 * reach it, and stopping it ends whatever it started). It does not outlive a host that dies:
 * it exits by itself when its stdin closes, and, for a worker whose event loop is stuck (a
 * catastrophic regex), the kernel kills it when the host dies (`setpriv --pdeathsig KILL`
 * execs into it: no extra process stays; without setpriv only the stdin watch holds). Throws
 * when the executable cannot be started.
 */
export function startProcessChannel(
  options: ProcessChannelOptions,
  listener: ChannelListener,
): Channel {
  const spawn = (program: string, args: string[]) =>
    spawnProcessGroup(program, {
      args,
      cwd: options.cwd,
      env: options.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    });
  let child: Deno.ChildProcess;
  // A program that is not there fails here, as itself, not as setpriv's exit code 127 (a bare
  // name, bubblewrap's, is found on PATH by setpriv).
  if (options.denoPath.includes("/")) Deno.statSync(options.denoPath);
  try {
    child = spawn(SETPRIV, ["--pdeathsig", "KILL", "--", options.denoPath, ...options.args]);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    child = spawn(options.denoPath, options.args);
  }
  const writer = child.stdin.getWriter();
  let stdinOpen = true;
  const stdout = (async () => {
    for await (const value of readJsonLines(child.stdout)) {
      const message = parseChildMessage(value);
      if (message !== null) listener(message);
    }
  })().catch(() => {});
  let stderrTail = "";
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write(text) {
        stderrTail = (stderrTail + text).slice(-STDERR_TAIL_CHARS);
      },
    }),
  ).catch(() => {});

  const ended = (async () => {
    const status = await child.status;
    // Whatever the worker started and left behind goes with it.
    signalProcessGroup(child.pid, "SIGKILL");
    await Promise.all([stdout, stderr]);
    stdinOpen = false;
    await writer.close().catch(() => {});
    const how = status.signal !== null
      ? `was killed by ${status.signal}`
      : `exited with code ${status.code}`;
    const detail = stderrTail.trim();
    return detail === "" ? how : `${how}: ${detail}`;
  })();

  return {
    pid: child.pid,
    ended,
    send(message: HostMessage) {
      const line = encodeLine(message);
      if (stdinOpen) writer.write(line).catch(() => {});
    },
    async stop(graceMs) {
      // A kill (no grace) must land before stdin closes: a child that sees stdin close first
      // cancels its calls and could still answer them before it dies.
      if (graceMs <= 0) signalProcessGroup(child.pid, "SIGKILL");
      if (stdinOpen) {
        stdinOpen = false;
        await writer.close().catch(() => {});
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, graceMs));
      await Promise.race([child.status, grace]);
      clearTimeout(timer);
      signalProcessGroup(child.pid, "SIGKILL");
      await ended;
    },
  };
}
