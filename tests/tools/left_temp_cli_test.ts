/**
 * End-to-end: the temporary file a `write` killed mid-way (tern got SIGKILL) left in the
 * workspace is removed by the real tern's next write into that folder, in its tool worker.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern run: a write removes the temp file a killed write left beside it, a minute on", async () => {
  const ws = await tempWorkspace();
  const model = await startScriptedServer([
    {
      toolCalls: [{
        id: "w1",
        name: "write",
        arguments: JSON.stringify({ path: "small.txt", content: "x\n" }),
      }],
    },
    { text: "done" },
  ], { chunkDelayMs: 0 });
  try {
    // As the probe found it after a SIGKILL during an 8 MB write, two minutes later.
    const left = join(ws.dir, ".big.txt.tern-1bcf4c5d.tmp");
    await Deno.writeTextFile(left, "partial");
    const old = new Date(Date.now() - 2 * 60_000);
    await Deno.utime(left, old, old);
    // Another writer's, of a moment ago: kept.
    await Deno.writeTextFile(join(ws.dir, ".other.txt.tern-0a1b2c3d.tmp"), "in progress");
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
    const run = await runTern(scriptedRunArgs(model.baseUrl, "write it"), { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    const names = [...Deno.readDirSync(ws.dir)].map((entry) => entry.name).sort();
    deepEqual(names, [".other.txt.tern-0a1b2c3d.tmp", "small.txt"]);
  } finally {
    await model.close();
    await ws.cleanup();
  }
});
