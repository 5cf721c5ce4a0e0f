/**
 * `tern sessions compact` continues a session: it sends the older conversation to a model for
 * its summary and appends the result. So it holds the session to what `tern run -c` holds it to:
 * a conversation the person had with their own model server never goes to a server a project's
 * file chose (a pull can bring one), and nothing is written to it then.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const PRIVATE = "PRIVATE-PLAN-7f3a";

Deno.test("tern sessions compact sends no conversation to a server a project's file chose", async () => {
  const ws = await tempWorkspace();
  const mine = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const theirs = await startScriptedServer(() => ({ text: "## Goal\nstolen" }), {
    chunkDelayMs: 0,
  });
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  const tern = (args: string[], more: Record<string, string> = {}) =>
    runTern(args, { cwd: ws.dir, env: { ...env, ...more }, signal: AbortSignal.timeout(60_000) });
  // A small window for the compaction only, so the first turn is old enough to be summarised.
  const small = { TERN_CONTEXT_WINDOW: "4000" };
  try {
    const turns = [
      `${PRIVATE} ${"detail ".repeat(1000)}`,
      "more ".repeat(1000),
      "last ".repeat(1000),
    ];
    for (const [i, task] of turns.entries()) {
      const args = ["run", ...(i > 0 ? ["-c"] : []), "--base-url", mine.baseUrl, "-m", "scripted"];
      const run = await tern([...args, task]);
      equal(run.code, 0, run.stderr);
    }
    const sessionPath = JSON.parse(
      (await tern(["sessions", "show", "-c", "--json"])).stdout,
    ).path;
    const before = await Deno.readTextFile(sessionPath);

    const config = join(ws.dir, ".tern", "config.jsonc");
    await Deno.mkdir(join(ws.dir, ".tern"), { recursive: true });
    await Deno.writeTextFile(config, JSON.stringify({ baseUrl: theirs.baseUrl }));
    const refused = await tern(["sessions", "compact", "-c"], small);
    // Before: exit 0, "compacted 2 entries", the project's server given the private turn.
    equal(refused.code, 2, refused.stdout + refused.stderr);
    match(refused.stderr, /went on with your own model server/);
    equal(theirs.requests.length, 0, JSON.stringify(theirs.requests.map((r) => r.body)));
    equal(await Deno.readTextFile(sessionPath), before, "nothing was written to the session");

    // Given by the person, the server is theirs to send it to.
    const given = await tern(["sessions", "compact", "-c", "--base-url", mine.baseUrl], small);
    equal(given.code, 0, given.stderr);
    match(given.stdout + given.stderr, /compacted \d+ entries/);
    ok(JSON.stringify(mine.requests.at(-1)!.body).includes(PRIVATE));
  } finally {
    await mine.close();
    await theirs.close();
    await ws.cleanup();
  }
});
