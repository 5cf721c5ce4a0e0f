/** Runs the real `tern` (main.ts with the declared permission flags) as a child process. */
import { dirname, join, resolve } from "node:path";

export const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "../..");

/**
 * The main process's flags as bin/tern computes them for `env` (they depend on TERN_HOME,
 * HOME and TMPDIR, and the hosts on the URLs in the environment), the command line `args` and
 * the files in `cwd` (its config names hosts too), read from bin/_env.sh so tests run tern
 * exactly as users do.
 */
export function declaredFlags(
  env: Record<string, string> = {},
  where: { cwd?: string; args?: readonly string[] } = {},
): string[] {
  // bash from the test's own PATH: `env` may give tern a PATH with a workspace folder first.
  const out = new Deno.Command(ownBash(), {
    args: [
      "-c",
      `source "${ROOT}/bin/_env.sh"; tern_deno_flags "$@"; printf '%s\\n' "\${TERN_DENO_FLAGS[@]}"`,
      "tern",
      ...(where.args ?? []),
    ],
    cwd: where.cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
  }).outputSync();
  return new TextDecoder().decode(out.stdout).trim().split("\n");
}

/** bash's path on this process's PATH. */
function ownBash(): string {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
    try {
      if (Deno.statSync(`${dir}/bash`).isFile) return `${dir}/bash`;
    } catch {
      // Not here.
    }
  }
  return "/bin/bash";
}

/**
 * The command line most CLI tests run: `tern run` against the scripted model server at
 * `baseUrl` with review off (`--mode bypass`; the sandbox still applies), JSON output unless
 * `json` is false, and `task`.
 */
export function scriptedRunArgs(baseUrl: string, task: string, json = true): string[] {
  return [
    "run",
    "--base-url",
    baseUrl,
    "-m",
    "scripted",
    "--mode",
    "bypass",
    ...(json ? ["-o", "json"] : []),
    task,
  ];
}

export interface TernRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunTernOptions {
  cwd: string;
  /** The whole environment of the child (nothing is inherited but PATH). */
  env?: Record<string, string>;
  signal?: AbortSignal;
}

/** `tern args` as bin/tern starts it (the declared flags for this command line), not yet run. */
export function ternCommand(args: string[], options: RunTernOptions, stdin: "null" | "piped") {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...declaredFlags(options.env, { cwd: options.cwd, args }),
      join(ROOT, "main.ts"),
      ...args,
    ],
    cwd: options.cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...options.env },
    clearEnv: true,
    stdin,
    stdout: "piped",
    stderr: "piped",
    signal: options.signal,
  });
}

function ternRun(out: Deno.CommandOutput): TernRun {
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

export async function runTern(args: string[], options: RunTernOptions): Promise<TernRun> {
  return ternRun(await ternCommand(args, options, "null").output());
}

/** Runs the real `tern` with `input` on its stdin (a pipe, so the interactive UI is in line mode). */
export async function runTernWithInput(
  args: string[],
  input: string,
  options: RunTernOptions,
): Promise<TernRun> {
  const child = ternCommand(args, options, "piped").spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  return ternRun(await child.output());
}

/** A temporary workspace and TERN_HOME, removed by `cleanup()`. */
export async function tempWorkspace(): Promise<
  { dir: string; home: string; cleanup(): Promise<void> }
> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ws-" }));
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-home-" }));
  return {
    dir,
    home,
    cleanup: async () => {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    },
  };
}
