/**
 * `tern sessions rewind --json` masks the keys tern holds in what it prints, as the text output
 * does: a checkpoint's patch holds the files' old and new content, and a file may hold a key.
 * Real files, real git, the real store, tern as a process.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { Session } from "../../src/session/session.ts";
import { checkpointedTurn, strictCheckpoints, temp } from "../support/host_tool.ts";
import { runTern } from "../support/tern_process.ts";

const KEY = "sk-live-rewind-4f9c2a7e1b3d5f60";

Deno.test("tern sessions rewind --json masks a key held in the patch, as the text output does", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  Deno.writeTextFileSync(join(ws, "config.txt"), `api_key = ${KEY}\n`);
  const session = Session.create(home, { cwd: ws, ternVersion: "test" });
  const turn = await checkpointedTurn(session, strictCheckpoints(session, ws), () => {
    Deno.writeTextFileSync(join(ws, "config.txt"), "api_key = from the environment\n");
  });
  session.close();
  const env = { TERN_HOME: home, HOME: home, TERN_API_KEY: KEY };
  for (const args of [["--json"], [], ["--json", "--yes"]]) {
    const run = await runTern(["sessions", "rewind", session.path, turn, ...args], {
      cwd: ws,
      env,
    });
    equal(run.code, 0, run.stderr);
    ok(run.stdout.includes("config.txt"), run.stdout);
    ok(!run.stdout.includes(KEY) && !run.stderr.includes(KEY), run.stdout);
    ok(run.stdout.includes("REDACTED"), run.stdout);
    if (args.includes("--json")) JSON.parse(run.stdout);
  }
  // The rewind itself wrote the file back as it was.
  equal(Deno.readTextFileSync(join(ws, "config.txt")), `api_key = ${KEY}\n`);
});
