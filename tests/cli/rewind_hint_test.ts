/** What `tern sessions rewind … --yes` says it did, and the undo command it prints, which works. */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { loadSession } from "../../src/session/load.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern sessions rewind prints the real session id to undo with, and an undo says so", async () => {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
    const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
    const run = await tern(scriptedRunArgs(server.baseUrl, "hello"));
    equal(run.code, 0, run.stderr);
    const folder = [...Deno.readDirSync(join(ws.home, "sessions"))][0].name;
    const file = [...Deno.readDirSync(join(ws.home, "sessions", folder))]
      .find((entry) => entry.name.endsWith(".jsonl"))!.name;
    const session = await loadSession(join(ws.home, "sessions", folder, file));
    const user = session.entries.find((e) => e.type === "message" && e.message.role === "user")!;

    const rewind = await tern([
      "sessions",
      "rewind",
      "-c",
      user.id,
      "--restore",
      "conversation",
      "--yes",
    ]);
    equal(rewind.code, 0, rewind.stderr);
    match(rewind.stdout, /^rewound: .*; the conversation continues from before that message$/m);
    equal(rewind.stderr.includes("<session>"), false, rewind.stderr);
    const hint = /`tern (sessions rewind \S+ undo --yes)`/.exec(rewind.stderr);
    ok(hint, rewind.stderr);
    ok(hint[1].includes(session.header.id), rewind.stderr);

    const undo = await tern([...hint[1].split(" "), "--restore", "conversation"]);
    equal(undo.code, 0, undo.stderr);
    match(undo.stdout, /^undone: .*; the conversation is back where it was before the rewind$/m);
    match(
      undo.stderr,
      new RegExp(`redo the rewind with \`tern sessions rewind ${session.header.id} undo --yes\``),
    );
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
