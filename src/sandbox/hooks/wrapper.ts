/**
 * The shell script a hook runs in: it feeds the event's JSON to the hook's command on stdin and
 * prints the command's stdout, stderr and exit code back between random markers (the shell
 * runner gives a command no stdin and mixes its stdout and stderr).
 *
 * The script is all that reaches the sandbox: the runner starts it as one argument of `bash -c`,
 * and Linux caps one argument at 128 KiB (MAX_ARG_STRLEN), past which the sandbox cannot start
 * at all. So the JSON never rides in it as it is once it is large: it is gzipped and
 * base64-encoded, decoded inside into a file of the sandbox's private `/tmp`, and the command
 * reads that file as its stdin. A script that would still pass {@linkcode MAX_SCRIPT_BYTES} is
 * not made: the caller treats the hook as one that could not run.
 */

/**
 * The most bytes of a wrapper script: below the 131,072 of one argument, leaving room for the
 * head (limits, cgroups) the runner puts before every command.
 */
export const MAX_SCRIPT_BYTES = 100_000;

/** Input JSON up to this many bytes goes in as it is, in a quoted here-document. */
const PLAIN_BYTES = 64_000;

/**
 * The script that feeds `json` to `command` in `workspace` and prints its stdout, stderr and
 * exit code between `marker`s (random per run, `[A-Za-z0-9_]` only); undefined when even the
 * compressed JSON would make it longer than {@linkcode MAX_SCRIPT_BYTES}. Only bash builtins read
 * the files back, so a small input costs the hook's own process plus `mktemp` and `rm`. A hook
 * that forged the markers could only garble its own answer, which is its to give anyway.
 */
export async function hookScript(
  command: string,
  json: string,
  options: { marker: string; workspace: string },
): Promise<string | undefined> {
  const { marker, workspace } = options;
  const bytes = new TextEncoder().encode(json);
  // JSON.stringify writes no newline and base64 has no "_": the marker line cannot occur inside.
  const feed = bytes.length <= PLAIN_BYTES
    ? [`bash -c ${quote(command)} >"$__d/o" 2>"$__d/e" <<'${marker}'`, json, marker]
    : [
      // A decoding that fails (no gzip, the private /tmp full) runs no hook: the markers are
      // never printed, and the hook counts as one that could not run.
      `base64 -d <<'${marker}' | gzip -dc >"$__d/i" || { rm -rf "$__d"; exit 96; }`,
      ...lines((await gzip(bytes)).toBase64(), 76),
      marker,
      `bash -c ${quote(command)} <"$__d/i" >"$__d/o" 2>"$__d/e"`,
    ];
  const script = [
    // No bytecode beside a hook's Python: a `__pycache__` in a script's folder lapses its trust.
    `export CLAUDE_PROJECT_DIR=${quote(workspace)} TERN_PROJECT_DIR=${quote(workspace)} ` +
    "PYTHONDONTWRITEBYTECODE=1",
    `__d=$(mktemp -d) || exit 97`,
    ...feed,
    `__c=$?`,
    `printf '%s' "${marker}:$(<"$__d/o"):${marker}:$(<"$__d/e"):${marker}:$__c"`,
    `rm -rf "$__d"`,
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

function lines(text: string, width: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += width) out.push(text.slice(i, i + width));
  return out;
}
