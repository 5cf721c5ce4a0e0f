/**
 * A TERN_HOME that tern cannot write is the system refusing a file operation, not a bug of
 * tern: each command says which path, why, and what to do, exits 1, shows no stack trace and
 * leaves nothing behind.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/**
 * Makes `dir` refuse new entries, even to root (`chattr +i`); returns its undo, or undefined
 * when this machine cannot (no chattr, a file system without the flag).
 */
async function readOnlyFolder(dir: string): Promise<(() => Promise<void>) | undefined> {
  if (Deno.uid() !== 0) {
    await Deno.chmod(dir, 0o555);
    return () => Deno.chmod(dir, 0o755);
  }
  try {
    const made = await new Deno.Command("chattr", { args: ["+i", dir], stderr: "null" }).output();
    if (!made.success) return undefined;
  } catch {
    return undefined;
  }
  return async () => {
    await new Deno.Command("chattr", { args: ["-i", dir] }).output();
  };
}

Deno.test("main() says which path a TERN_HOME that cannot be written refused, with no stack trace", async () => {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const ternHome = join(ws.home, "tern");
  await Deno.mkdir(ternHome);
  const undo = await readOnlyFolder(ternHome);
  try {
    if (undo === undefined) {
      console.warn("SKIPPED: this machine cannot make a folder read-only for root (chattr)");
      return;
    }
    const env = { HOME: ws.home, TERN_HOME: ternHome, TERN_API_KEY: "k" };
    const runs = [
      { args: ["run", "--base-url", server.baseUrl, "-m", "scripted", "hi"], made: "sessions" },
      { args: ["memory", "save", "the tests use deno test"], made: "memory" },
    ];
    for (const { args, made } of runs) {
      const run = await runTern(args, { cwd: ws.dir, env });
      equal(run.code, 1, run.stderr);
      ok(!run.stderr.includes("internal error"), run.stderr);
      ok(!/^\s+at /m.test(run.stderr), run.stderr);
      match(run.stderr, new RegExp(`Cannot create the folder "${ternHome}/${made}[^"]*": `));
      match(run.stderr, /set TERN_HOME to a folder it can write/);
      equal(run.stdout, "");
    }
    deepEqual(await Array.fromAsync(Deno.readDir(ternHome)), []);
    equal(server.requests.length, 0);
  } finally {
    await undo?.();
    await server.close();
    await ws.cleanup();
  }
});
