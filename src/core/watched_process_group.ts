/**
 * Starting a long-lived host helper (an MCP server over stdio, a language server) in a process
 * group of its own that ends with tern even when tern is killed by SIGKILL, when nothing else
 * (bubblewrap's `--die-with-parent`) would end it: the idea of the unsandboxed background
 * process's watchdog (background_launch.ts), for a process whose stdin is its protocol.
 *
 * The liveness pipe is a FIFO in a private temporary folder: Deno.Command gives a child no
 * descriptor beyond stdin, stdout and stderr, which stay the helper's protocol, untouched (and
 * node:child_process's fourth pipe needs environment access tern's permissions do not grant).
 * tern holds the FIFO open for writing and never writes; a watchdog in the helper's group
 * reads it and, at end-of-file (tern closed it, or tern is gone and the kernel closed it),
 * kills the whole group: the helper and everything it started that stayed in its group.
 */
import { hostProgram } from "./host_programs.ts";
import { resolveProgram, spawnProcessGroup } from "./process_group.ts";

/** Options for {@linkcode spawnWatchedProcessGroup}. */
export interface WatchedProcessOptions {
  args: readonly string[];
  /** Working directory (absolute). */
  cwd: string;
  /** The complete environment; nothing else is inherited. */
  env: Record<string, string>;
  /**
   * `command` is tern's own runtime (`Deno.execPath()`), started as it is: not looked up on
   * PATH nor refused as a program in a folder commands may write, like every other process tern
   * starts of itself (the tool worker, a subagent, the web request process).
   */
  ownRuntime?: boolean;
}

/**
 * The wrapper run as `bash -p -c <wrapper> tern-watched <fifo> <rm> <env> -u … -- <program>
 * <args>`. It opens the FIFO for reading on fd 3 without blocking, even when tern is already
 * gone: fd 4 opens it for reading and writing first (a writer of its own), and closes once fd 3
 * is open. The watchdog, a grandchild so that the helper has no child it did not start, removes
 * the FIFO's folder and becomes a bash of its own (`tern-watchdog`, without the helper's
 * command line, which `pgrep -f` would find twice), which ignores the SIGTERM a graceful stop
 * sends the group and kills the group (itself too) at fd 3's end-of-file. The helper is exec'd
 * without fd 3, through `env -u` to drop what bash adds to the environment (`SHLVL`, `PWD`)
 * when it was not given. `-p` keeps bash from reading `BASH_ENV` and importing functions:
 * nothing runs before the helper but this.
 */
const WATCHDOG_WRAPPER = 'exec 4<>"$1" 3<"$1" 4>&-; ( ( "$2" -rf -- "${1%/*}"; ' +
  `exec "$BASH" -p -c "trap '' TERM; read -r -u 3 _; kill -KILL 0" tern-watchdog ) & ) ` +
  '</dev/null >/dev/null 2>&1; exec 3<&-; shift 2; exec "$@"';

/** Names bash sets in the helper's environment unless it had them. */
const ADDED_NAMES = ["SHLVL", "PWD"];

/**
 * Starts `command` with `options.args` as `spawnProcessGroup` does (a new process group whose
 * id is the leader's pid, exactly `options.env` but for a `PWD` in it, which bash makes name
 * the working directory, the program looked up on its `PATH`), its
 * stdin, stdout and stderr piped, and a watchdog that kills the group when tern closes its end
 * of the liveness pipe: when the leader exits (what it left in the group goes with it) or when
 * tern dies, even by SIGKILL. A process that leaves the group (`setsid`) is out of its reach.
 * Rejects with Deno's `NotFound` for a missing program or working directory, `PermissionDenied`
 * for a file that cannot run, and an Error when the liveness pipe cannot be made.
 */
export async function spawnWatchedProcessGroup(
  command: string,
  options: WatchedProcessOptions,
): Promise<Deno.ChildProcess> {
  const { cwd, env } = options;
  const program = options.ownRuntime
    ? command
    : resolveProgram(command, { cwd, env, clearEnv: true });
  const [bash, rm, envProgram, mkfifo] = ["bash", "rm", "env", "mkfifo"].map(helper);
  const { fifo, liveness } = await livenessPipe(mkfifo);
  const drop = ADDED_NAMES.filter((name) => env[name] === undefined)
    .flatMap((name) => ["-u", name]);
  let child: Deno.ChildProcess;
  try {
    child = spawnProcessGroup(bash, {
      args: ["-p", "-c", WATCHDOG_WRAPPER, "tern-watched", fifo, rm, envProgram, ...drop, "--"]
        .concat(program, options.args),
      cwd,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    });
  } catch (error) {
    liveness.close();
    removeFolderOf(fifo);
    throw error;
  }
  const letGo = () => {
    liveness.close();
    // The watchdog removed it, unless the wrapper never ran.
    removeFolderOf(fifo);
  };
  child.status.then(letGo, letGo);
  return child;
}

/** A new FIFO in a private folder, held open by tern for writing (and reading: no block). */
async function livenessPipe(mkfifo: string): Promise<{ fifo: string; liveness: Deno.FsFile }> {
  const folder = await Deno.makeTempDir({ prefix: "tern-liveness-" });
  const fifo = `${folder}/pipe`;
  try {
    const made = await new Deno.Command(mkfifo, {
      args: ["-m", "600", "--", fifo],
      clearEnv: true,
      env: { LC_ALL: "C" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!made.success) throw new Error(new TextDecoder().decode(made.stderr).trim());
    return { fifo, liveness: await Deno.open(fifo, { read: true, write: true }) };
  } catch (error) {
    removeFolderOf(fifo);
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`Cannot make the liveness pipe "${fifo}": ${detail}`, { cause: error });
  }
}

function removeFolderOf(fifo: string): void {
  Deno.remove(fifo.slice(0, fifo.lastIndexOf("/")), { recursive: true }).catch(() => {});
}

/** A program of tern's own, found outside the folders commands may write. */
function helper(name: string): string {
  try {
    return hostProgram(name);
  } catch (error) {
    throw new Error(`Cannot find "${name}" on the host: tern needs it to start helpers`, {
      cause: error,
    });
  }
}
