/** `tern audit <session>` takes a session as `tern sessions` does: its id, an id prefix or its file. */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern audit shows a session's audit log by session id, id prefix and session file", async () => {
  const script = (request: ModelRequest) =>
    request.messages.some((m) => m.role === "tool")
      ? { text: "done" }
      : { toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"a.txt"}' }] };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, "a.txt"), "hello\n");
    const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
    const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
    const run = await tern(scriptedRunArgs(server.baseUrl, "read it"));
    equal(run.code, 0, run.stderr);
    // A second session, so that the audit log must be told apart by the session it names.
    equal((await tern(scriptedRunArgs(server.baseUrl, "again"))).code, 0);
    const list = JSON.parse((await tern(["sessions", "list", "--json"])).stdout) as {
      id: string;
      path: string;
    }[];
    const first = list.at(-1)!;
    for (const ref of [first.id, first.id.slice(0, 8), first.path]) {
      const audit = await tern(["audit", ref]);
      equal(audit.code, 0, `${ref}: ${audit.stderr}`);
      match(audit.stdout, /^Audit log ".*\/audit\/.*\.jsonl": 1 tool call$/m);
      match(audit.stdout, /read .*path="a\.txt"/);
    }
    const json = await tern(["audit", first.id.slice(0, 8), "--json"]);
    equal(JSON.parse(json.stdout.trim()).session, first.id);
    const unknown = await tern(["audit", "ffffffff"]);
    equal(unknown.code, 2);
    match(unknown.stderr, /Unknown audit session "ffffffff": .*no session with that id/);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
