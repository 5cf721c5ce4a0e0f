/**
 * The shell script a hook runs in: it feeds the event's JSON to the hook's command on stdin and
 * prints the command's stdout, stderr and exit code back between random markers (the shell
 * runner gives a command no stdin and mixes its stdout and stderr).
 *
 * The script is all that reaches the sandbox: the runner starts it as one argument of `bash -c`,
 * and Linux caps one argument at 128 KiB (MAX_ARG_STRLEN), past which the sandbox cannot start
 * at all. So the JSON never rides in it as it is once it is large: it is gzipped and
 * base64-encoded, and decoded inside. A script that would still pass
 * {@linkcode MAX_SCRIPT_BYTES} is not made: the caller treats the hook as one that could not run.
 *
 * Nothing of the hook's input or answer passes through a file: the JSON is a shell word fed to
 * the hook through a pipe, and its stdout and stderr come back through command substitutions
 * (pipes too). A file in `/tmp` (or a here-document, which bash may keep there) would let a
 * command that fills `/tmp` cut the hook's answer off: a guard's decision lost, the call passed.
 * Whenever the wrapper's own part fails, it prints no final marker, and the caller treats the
 * hook as one that could not run, never as one that ran and had no opinion.
 */

/**
 * The most bytes of a wrapper script: below the 131,072 of one argument, leaving room for the
 * head (limits, cgroups) the runner puts before every command.
 */
export const MAX_SCRIPT_BYTES = 100_000;

/** Input JSON up to this many bytes goes in as it is, in a quoted shell word. */
const PLAIN_BYTES = 64_000;

/**
 * The script that feeds `json` to `command` in `workspace` and prints its stdout, stderr and
 * exit code between `marker`s (random per run, `[A-Za-z0-9_]` only); undefined when even the
 * compressed JSON would make it longer than {@linkcode MAX_SCRIPT_BYTES}. It writes no file. A
 * hook that forged the markers could only garble its own answer, which is its to give anyway.
 */
export async function hookScript(
  command: string,
  json: string,
  options: { marker: string; workspace: string },
): Promise<string | undefined> {
  const { marker, workspace } = options;
  const bytes = new TextEncoder().encode(json);
  // A decoding that fails runs no hook: the final marker is never printed, and the hook counts
  // as one that could not run. JSON.stringify ends with no newline, which `$(…)` would drop.
  const input = bytes.length <= PLAIN_BYTES
    ? `__i=${quote(json)}`
    : `__i=$(set -o pipefail; printf '%s' '${(await gzip(bytes)).toBase64()}' | base64 -d | ` +
      `gzip -dc) || exit 96`;
  const script = [
    // No bytecode beside a hook's Python: a `__pycache__` in a script's folder lapses its trust.
    `export CLAUDE_PROJECT_DIR=${quote(workspace)} TERN_PROJECT_DIR=${quote(workspace)} ` +
    "PYTHONDONTWRITEBYTECODE=1",
    input,
    // Kills every process but the wrapper's own ($$, $1, the caller) that holds the caller's
    // stdout or fd 3 (the pipes the hook's answer comes back through), until none does.
    "__reap() { local n f p k; for n in 1 2 3 4 5 6 7 8; do k=; " +
    "for f in /proc/[0-9]*/fd/*; do p=${f#/proc/}; p=${p%%/*}; " +
    'case $p in "$$"|"$1"|"$BASHPID") continue;; esac; ' +
    'if [ "$f" -ef /proc/$BASHPID/fd/1 ] || [ "$f" -ef /proc/$BASHPID/fd/3 ]; then ' +
    'kill -KILL "$p" 2>/dev/null; k=1; fi; done; [ -z "$k" ] && return; done; }',
    // fd 5: the script's own output. The hook's stdout goes to the inner `$(…)`, its stderr
    // (fd 3) to the outer one, whose status is the hook's exit code. The answer is taken when
    // the hook exits: it runs as a job of its own (`set -m`: a process group), and then what is
    // left of that group, and any other process still holding those pipes (one that left the
    // group: `setsid`), is killed. A background child keeping the hook's stdout open
    // (`sleep 60 &`) would otherwise hold the `$(…)` until the hook's timeout, its answer lost.
    "exec 5>&1 || exit 95",
    `__e=$( { __s=$BASHPID; __o=$(set -m; bash -c ${quote(command)} ` +
    `< <(printf '%s' "$__i" 3>&- 5>&-) 2>&3 3>&- 5>&- & __p=$!; wait "$__p"; __c=$?; ` +
    `kill -KILL -- "-$__p" 2>/dev/null; __reap "$__s"; exit "$__c"); __c=$?; ` +
    `printf '%s' "${marker}:$__o:${marker}:" >&5 || exit 95; exit "$__c"; } 3>&1 )`,
    "__c=$?",
    `printf '%s' "$__e:${marker}:$__c"`,
  ].join("\n");
  return new TextEncoder().encode(script).length <= MAX_SCRIPT_BYTES ? script : undefined;
}

/** The hook's stdout, stderr and exit code from the output of {@linkcode hookScript}'s run. */
export function unwrap(
  output: string,
  marker: string,
): { stdout: string; stderr: string; code: number } | undefined {
  const start = output.indexOf(`${marker}:`);
  const end = output.lastIndexOf(`:${marker}:`);
  const code = /^:[^:]+:(\d+)$/.exec(output.slice(end).trimEnd());
  if (start < 0 || end <= start || code === null) return undefined;
  const both = output.slice(start + marker.length + 1, end);
  const middle = both.indexOf(`:${marker}:`);
  if (middle < 0) return undefined;
  return {
    stdout: both.slice(0, middle),
    stderr: both.slice(middle + marker.length + 2),
    code: Number(code[1]),
  };
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

async function gzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
