/**
 * stdout that refuses tern's output (a full disk: /dev/full) ends the command with one line,
 * `tern: cannot write output: …`, and exit code 1, never an internal error with a stack; a
 * reader that went away (a broken pipe) stays a quiet success (broken_pipe_test.ts).
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import {
  declaredFlags,
  ROOT,
  scriptedRunArgs,
  tempWorkspace,
  type TernRun,
} from "../support/tern_process.ts";

const CRASH = /internal error|^\s+at |file:\/\//m;

/** `tern args` as bin/tern starts it, with stdout on /dev/full (and `input` on stdin). */
async function ternToFullDisk(
  args: string[],
  options: { cwd: string; env: Record<string, string>; input?: string },
): Promise<TernRun> {
  const child = new Deno.Command("bash", {
    args: [
      "-c",
      'exec "$@" >/dev/full',
      "bash",
      Deno.execPath(),
      "run",
      ...declaredFlags(options.env, { cwd: options.cwd, args }),
      join(ROOT, "main.ts"),
      ...args,
    ],
    cwd: options.cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...options.env },
    clearEnv: true,
    stdin: options.input === undefined ? "null" : "piped",
    stderr: "piped",
  }).spawn();
  if (options.input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.input));
    await writer.close();
  }
  const out = await child.output();
  return { code: out.code, stdout: "", stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("a write to a full stdout ends each command with one line and exit code 1", async () => {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  try {
    const cases = [
      ["--help"],
      ["completions", "bash"],
      ["config"],
      ["doctor"],
      scriptedRunArgs(server.baseUrl, "hi", false),
      scriptedRunArgs(server.baseUrl, "hi"),
      // A session exists now: the list has a row to write.
      ["sessions", "list"],
    ];
    for (const args of cases) {
      const run = await ternToFullDisk(args, { cwd: ws.dir, env });
      const where = `${args.join(" ")}: ${run.stderr}`;
      equal(run.code, 1, where);
      match(run.stderr, /^tern: cannot write output: No space left on device$/m, where);
      ok(!CRASH.test(run.stderr), where);
    }
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("line mode (stdin a pipe) with a full stdout says so once and exits 1", async () => {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  try {
    const args = ["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
    const run = await ternToFullDisk(args, { cwd: ws.dir, env, input: "hi\nagain\n" });
    equal(run.code, 1, run.stderr);
    equal(run.stderr.match(/^tern: cannot write output: No space left on device$/gm)?.length, 1);
    ok(!CRASH.test(run.stderr), run.stderr);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("bin/tern with stdout closed says it cannot write output, with exit code 1", async () => {
  const ws = await tempWorkspace();
  try {
    const out = await new Deno.Command("bash", {
      args: ["-c", 'exec "$@" >&-', "bash", join(ROOT, "bin/tern"), "config"],
      cwd: ws.dir,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: ws.home,
        TERN_HOME: ws.home,
        ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      },
      clearEnv: true,
      stdin: "null",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    equal(out.code, 1, stderr);
    match(stderr, /^tern: cannot write output: stdout is closed$/m);
  } finally {
    await ws.cleanup();
  }
});
