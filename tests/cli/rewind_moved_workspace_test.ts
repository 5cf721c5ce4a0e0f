/**
 * `tern sessions rewind` of a session whose workspace was moved or removed says so, changes
 * nothing, and still rewinds the conversation alone when asked. Real files, real git, the real
 * store, tern as a process.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { Session } from "../../src/session/session.ts";
import { checkpointedTurn, strictCheckpoints, temp } from "../support/host_tool.ts";
import { runTern } from "../support/tern_process.ts";

Deno.test("tern sessions rewind names a workspace that was moved, changing nothing", async () => {
  const home = await temp("tern-home-");
  const root = await temp("tern-root-");
  const ws = join(root, "ws");
  Deno.mkdirSync(ws);
  Deno.writeTextFileSync(join(ws, "a.txt"), "one\n");
  const session = Session.create(home, { cwd: ws, ternVersion: "test" });
  const turn = await checkpointedTurn(session, strictCheckpoints(session, ws), () => {
    Deno.writeTextFileSync(join(ws, "a.txt"), "two\n");
  });
  session.close();
  Deno.renameSync(ws, join(root, "moved"));
  const env = { TERN_HOME: home, HOME: home, TERN_API_KEY: "sk-test-x" };
  const before = Deno.readTextFileSync(session.path);
  for (const args of [[], ["--yes"]]) {
    const run = await runTern(["sessions", "rewind", session.path, turn, ...args], {
      cwd: root,
      env,
    });
    equal(run.code, 2, run.stderr);
    match(run.stderr, /its workspace ".*\/ws" is not a folder any more \(moved or removed\)/);
    match(run.stderr, /--restore conversation/);
  }
  equal(Deno.readTextFileSync(session.path), before, "the session changed");
  equal(Deno.readTextFileSync(join(root, "moved", "a.txt")), "two\n");
  // The conversation alone needs no files.
  const run = await runTern(
    ["sessions", "rewind", session.path, turn, "--restore", "conversation", "--yes"],
    { cwd: root, env },
  );
  equal(run.code, 0, run.stderr);
  match(run.stdout, /the conversation continues from before that message/);
});
