/**
 * `tern` in line mode (stdin a pipe) has no one to answer a picker: the commands that would ask
 * say what to give them and fail, `-r` without an id is refused, a failed slash command counts
 * in the exit code, and Ctrl-C stops the session. Each run is killed after a time limit, so a
 * hang fails the test instead of blocking it.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace, ternCommand } from "../support/tern_process.ts";

/** Longer than any of these runs takes on a busy machine; a hang is killed here. */
const HANG_MS = 30_000;

interface LineRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Killed at the time limit: tern did not end by itself. */
  hung: boolean;
}

/**
 * `tern args` with `input` on its stdin. Unless `then` is given stdin is closed after the input;
 * `then` runs with the process while its stdin stays open (closed once tern has ended).
 */
async function lineMode(
  args: string[],
  input: string,
  where: { cwd: string; env: Record<string, string> },
  then?: (child: Deno.ChildProcess) => Promise<void>,
): Promise<LineRun> {
  const limit = AbortSignal.timeout(HANG_MS);
  const child = ternCommand(args, { ...where, signal: limit }, "piped").spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  if (then === undefined) await writer.close();
  else await then(child);
  const out = await child.output();
  if (then !== undefined) await writer.close().catch(() => {});
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
    hung: limit.aborted,
  };
}

function environment(home: string, baseUrl: string): Record<string, string> {
  return {
    HOME: home,
    TERN_HOME: join(home, ".tern"),
    TERN_BASE_URL: baseUrl,
    TERN_MODEL: "scripted-model",
    TERN_API_KEY: "x",
    NO_COLOR: "1",
  };
}

/** The transcript as one line: notices are wrapped at 100 columns. */
function flat(text: string): string {
  return text.replace(/\s+/g, " ");
}

Deno.test("tern in line mode refuses every picker's command without its argument and goes on", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "Hello back." }], async (server) => {
      const input = [
        "hello",
        "/model",
        "/thinking",
        "/mode",
        "/profile",
        "/resume",
        "/tree",
        "/rewind",
        "/thinking high",
      ].join("\n") + "\n";
      const run = await lineMode([], input, {
        cwd: ws.dir,
        env: environment(ws.home, server.baseUrl),
      });
      ok(!run.hung, `tern waited for a picker no one can answer:\n${run.stdout}`);
      equal(run.code, 2, run.stderr);
      const said = flat(run.stdout);
      ok(said.includes("Hello back."), said);
      for (
        const refusal of [
          "/model needs a model name in line mode: /model <provider/model | model>",
          "/thinking needs a level in line mode: /thinking off|low|medium|high",
          "/mode needs a mode in line mode: /mode ask|auto|bypass",
          "/profile needs a profile name in line mode: /profile <name>, one of :read-only",
          "/resume needs a session id in line mode: /resume <id>",
          "/tree needs a terminal to choose the entry: in line mode, start again with " +
          "`tern -c --from <entry>`",
          "/rewind needs a terminal to choose what goes back and to confirm it",
        ]
      ) ok(said.includes(refusal), `no "${refusal}" in:\n${run.stdout}`);
      // The lines after the refusals still ran.
      ok(said.includes("thinking: high"), said);
      equal(server.requests.length, 1);
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern -r without an id in line mode exits 2 before reading a line", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "Made." }, { text: "Never." }], async (server) => {
      const env = environment(ws.home, server.baseUrl);
      // A session to choose from: the picker would wait for it.
      const made = await runTern(["run", "make a session"], { cwd: ws.dir, env });
      equal(made.code, 0, made.stderr);
      const run = await lineMode(["-r"], "hi\n", { cwd: ws.dir, env });
      ok(!run.hung, `tern waited for the session picker:\n${run.stdout}${run.stderr}`);
      equal(run.code, 2, run.stderr);
      ok(
        flat(run.stderr).includes(
          "-r (--resume) without an id needs a terminal to choose the session: use -c",
        ),
        run.stderr,
      );
      equal(server.requests.length, 1, "the piped message went to the model");
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern in line mode: Ctrl-C stops the turn and the session (exit 130, no further line)", async () => {
  const ws = await tempWorkspace();
  try {
    const asked = Promise.withResolvers<void>();
    await withScriptedServer([{ fault: "hang" }, { text: "Never." }], async (server) => {
      // stdin stays open: tern must end without waiting for the end of its input.
      const run = await lineMode(
        [],
        "hi\nsecond\n",
        { cwd: ws.dir, env: environment(ws.home, server.baseUrl) },
        async (child) => {
          await asked.promise;
          child.kill("SIGINT");
        },
      );
      ok(!run.hung, `tern went on after Ctrl-C:\n${run.stdout}${run.stderr}`);
      equal(run.code, 130, run.stderr);
      ok(run.stdout.includes("stopped"), run.stdout);
      ok(!run.stdout.includes("second"), `a line after Ctrl-C was read:\n${run.stdout}`);
      ok(!run.stdout.includes("✗"), run.stdout);
      equal(server.requests.length, 1);
    }, { onRequest: () => asked.resolve() });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern in line mode exits 2 when a slash command fails, and runs the lines after it", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([], async (server) => {
      const where = { cwd: ws.dir, env: environment(ws.home, server.baseUrl) };
      const unknown = await lineMode([], "/nope\n", where);
      ok(!unknown.hung);
      equal(unknown.code, 2, unknown.stdout);
      ok(unknown.stdout.includes('Unknown command "/nope"'), unknown.stdout);

      const run = await lineMode([], "/save\n/thinking ultra\n/plan\n/thinking low\n", where);
      ok(!run.hung);
      equal(run.code, 2, run.stdout);
      const said = flat(run.stdout);
      for (
        const error of [
          "Nothing to save: write the fact after /save",
          'Unknown thinking "ultra"',
          "Say what to plan: /plan <task>",
        ]
      ) ok(said.includes(error), `no "${error}" in:\n${run.stdout}`);
      ok(said.includes("thinking: low"), said);
      equal(server.requests.length, 0);
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern in line mode with no message on stdin says so and exits 2, keeping no session", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "Never." }], async (server) => {
      const env = environment(ws.home, server.baseUrl);
      for (const input of ["", "\n   \n\t\n"]) {
        const run = await lineMode([], input, { cwd: ws.dir, env });
        ok(!run.hung, run.stderr);
        equal(run.code, 2, run.stderr);
        ok(flat(run.stderr).includes("No message on stdin"), run.stderr);
        ok(!run.stderr.includes("continue it with tern -c"), run.stderr);
      }
      equal(server.requests.length, 0);
      // A message, or a command, is input: the run succeeds as before.
      const said = await lineMode([], "hello\n", { cwd: ws.dir, env });
      equal(said.code, 0, said.stderr);
      ok(!said.stderr.includes("No message on stdin"), said.stderr);
      const command = await lineMode([], "/help\n", { cwd: ws.dir, env });
      equal(command.code, 0, command.stderr);
      ok(!command.stderr.includes("No message on stdin"), command.stderr);
    });
  } finally {
    await ws.cleanup();
  }
});
