/**
 * A `.env` tern cannot use whole says so: a line that is not `NAME=value` is named by number
 * (never its text, which may hold a key) once per run, and a `.env` that is a folder or a FIFO is
 * skipped alike with a warning, never the end of the run nor a read that waits forever.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-abc123def456ghi789jkl";

Deno.test("tern run warns once of a .env line that is not NAME=value, without its text", async () => {
  const ws = await tempWorkspace();
  try {
    const file = join(ws.dir, ".env");
    await Deno.writeTextFile(file, `# keys\nOPENAI_API_KEY ${KEY}\n`);
    const run = await runTern(["run", "hi"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
    });
    equal(run.code, 2, run.stderr);
    const warning = `tern: warning: Line 2 of .env file "${file}" is not NAME=value: ignored\n`;
    equal(run.stderr.split(warning).length, 2, run.stderr);
    match(run.stderr, /No API key for provider/);
    ok(!(run.stdout + run.stderr).includes(KEY.slice(3)), run.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("a .env that is a folder or a FIFO is skipped alike, with a warning naming it", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home };
  try {
    const file = join(ws.dir, ".env");
    await Deno.mkdir(file);
    const folder = await runTern(["config"], { cwd: ws.dir, env });
    equal(folder.code, 0, folder.stderr);
    ok(folder.stderr.includes(`Skipping .env file "${file}": it is a folder`), folder.stderr);
    await Deno.remove(file);
    const made = await new Deno.Command("mkfifo", { args: [file] }).output();
    equal(made.code, 0);
    const fifo = await runTern(["config"], {
      cwd: ws.dir,
      env,
      // A read of the FIFO never ends: killed then, the run fails the assertions below.
      signal: AbortSignal.timeout(60_000),
    });
    equal(fifo.code, 0, fifo.stderr);
    ok(fifo.stderr.includes(`Skipping .env file "${file}": it is not a regular file`), fifo.stderr);
  } finally {
    await ws.cleanup();
  }
});
