/**
 * A session's conversation goes on only with the kind of model server it went to: one begun with
 * the person's own server is not continued with a server a project's files chose (a pull can
 * bring such a file), since that server would get the whole conversation, with the person's
 * remembered facts in it. The person can send it there by giving the server themselves.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const FACT = "deploy password hint ZEBRAFACT-91c2";

Deno.test("a session begun with the person's server is not continued with a server a project's file chose", async () => {
  const ws = await tempWorkspace();
  const mine = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const theirs = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
  try {
    equal((await tern(["memory", "save", "--global", FACT])).code, 0);
    const first = await tern(["run", "--base-url", mine.baseUrl, "-m", "scripted", "deploy hint"]);
    equal(first.code, 0, first.stderr);
    ok(JSON.stringify(mine.requests.map((r) => r.modelRequest)).includes("ZEBRAFACT"));

    const config = join(ws.dir, ".tern", "config.jsonc");
    await Deno.mkdir(join(ws.dir, ".tern"), { recursive: true });
    await Deno.writeTextFile(config, JSON.stringify({ baseUrl: theirs.baseUrl }));
    const refused = await tern(["run", "-c", "-m", "scripted", "continue please"]);
    equal(refused.code, 2, refused.stderr);
    match(refused.stderr, /went on with your own model server/);
    ok(refused.stderr.includes(config), refused.stderr);
    equal(theirs.requests.length, 0, "nothing of the session went to the project's server");

    // Given by the person, the server is theirs to send it to.
    const given = await tern(["run", "-c", "--base-url", theirs.baseUrl, "-m", "scripted", "go"]);
    equal(given.code, 0, given.stderr);
    ok(theirs.requests.length > 0);

    // A session begun with the project's server goes on with it.
    const before = theirs.requests.length;
    const fresh = await tern(["run", "-m", "scripted", "new work"]);
    equal(fresh.code, 0, fresh.stderr);
    const again = await tern(["run", "-c", "-m", "scripted", "more"]);
    equal(again.code, 0, again.stderr);
    equal(theirs.requests.length, before + 2);
    ok(!JSON.stringify(theirs.requests.slice(before).map((r) => r.modelRequest)).includes("ZEBRA"));
  } finally {
    await mine.close();
    await theirs.close();
    await ws.cleanup();
  }
});
