/**
 * Mistakes a new user makes get a clear error and exit code 2, and never echo a key: a key typed
 * into the wrong setting, a config file that is a FIFO, a rewind to an entry that is not there,
 * a `--resume` that names a device.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-proj-SECRETabcdef1234567890XYZ";

Deno.test("a key typed into profile or provider is never printed back", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home };
  try {
    for (const setting of [{ profile: KEY }, { provider: KEY }]) {
      await Deno.writeTextFile(join(ws.home, "config.jsonc"), JSON.stringify(setting));
      const shown = await runTern(["config"], { cwd: ws.dir, env });
      ok(!(shown.stdout + shown.stderr).includes("SECRETabcdef"), shown.stdout + shown.stderr);
      const run = await runTern(["run", "-m", "scripted", "hi"], { cwd: ws.dir, env });
      equal(run.code, 2, run.stderr);
      ok(!(run.stdout + run.stderr).includes("SECRETabcdef"), run.stderr);
      match(run.stderr, /looks like a secret \(not shown\)/);
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("a config file that is a FIFO is refused by name, not read forever", async () => {
  const ws = await tempWorkspace();
  try {
    const fifo = join(ws.home, "config.jsonc");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    equal(made.code, 0);
    const run = await runTern(["config"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
      // A read of the FIFO never ends: killed then, the run fails the assertions below.
      signal: AbortSignal.timeout(60_000),
    });
    equal(run.code, 2, run.stderr);
    ok(run.stderr.includes(`"${fifo}": it is a FIFO, not a regular file`), run.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("a rewind to an entry that is no user message, or an undo of none, is bad input (exit 2)", async () => {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  try {
    const first = await runTern([
      "run",
      "--base-url",
      server.baseUrl,
      "-m",
      "scripted",
      "-o",
      "json",
      "hi",
    ], {
      cwd: ws.dir,
      env,
    });
    equal(first.code, 0, first.stderr);
    const { sessionPath } = JSON.parse(first.stdout);
    const sessionId = String(sessionPath).match(/_([0-9a-f-]{36})\.jsonl$/)![1];
    const bad = await runTern(["sessions", "rewind", sessionId, "nope"], { cwd: ws.dir, env });
    equal(bad.code, 2, bad.stderr);
    ok(bad.stderr.includes(`tern sessions tree ${sessionId}`), bad.stderr);
    const undo = await runTern(["sessions", "rewind", sessionId, "undo"], { cwd: ws.dir, env });
    equal(undo.code, 2, undo.stderr);
    match(undo.stderr, /there was none/);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("--resume naming a device says which file to give, and never to remove it", async () => {
  const ws = await tempWorkspace();
  try {
    const run = await runTern(["-r", "/dev/zero", "run", "hi"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
    });
    equal(run.code, 2, run.stderr);
    match(run.stderr, /it is a device, not a regular file/);
    ok(!run.stderr.includes("remove it"), run.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("line mode fed nothing to send promises no session to continue", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  try {
    const fed = await runTernWithInput(
      ["--base-url", "http://127.0.0.1:9/v1", "-m", "scripted"],
      "\n\n",
      {
        cwd: ws.dir,
        env,
      },
    );
    // Nothing to send is a usage error (see interactive_line_no_terminal_test.ts).
    equal(fed.code, 2, fed.stderr);
    match(fed.stderr, /No message on stdin/);
    ok(!fed.stderr.includes("continue it with tern -c"), fed.stderr);
    const next = await runTern(["run", "-c", "-m", "scripted", "x"], { cwd: ws.dir, env });
    equal(next.code, 2);
    match(next.stderr, /There is no session to continue/);
  } finally {
    await ws.cleanup();
  }
});
