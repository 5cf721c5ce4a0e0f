/**
 * End-to-end: a command makes FIFOs named like ignore files, and the model's grep (ripgrep in the
 * tool worker, in bubblewrap) still answers, from the JavaScript engine, instead of waiting to
 * the tool's timeout at every call.
 */
import { equal, match } from "node:assert/strict";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

testWith([bwrapNeed], "grep answers past FIFO ignore files a command made", async () => {
  const call = (id: string, name: string, args: unknown) => ({
    toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
  });
  const server = await startScriptedServer([
    call("c1", "bash", { command: "mkdir -p d && mkfifo d/.gitignore .rgignore" }),
    call("c2", "grep", { pattern: "needle" }),
    call("c3", "grep", { pattern: "needle" }),
    { text: "done" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await Deno.mkdir(`${ws.dir}/d`);
    await Deno.writeTextFile(`${ws.dir}/d/a.txt`, "a needle here\n");
    const run = await runTern(scriptedRunArgs(server.baseUrl, "go"), {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
    });
    equal(run.code, 0, run.stderr);
    const results = server.requests.flatMap((request) =>
      request.modelRequest.messages.filter((m) => m.role === "tool").map((m) => String(m.content))
    );
    const greps = [...new Set(results.filter((text) => text.includes("needle")))];
    equal(greps.length > 0, true, results.join("\n---\n"));
    for (const text of greps) match(text, /d\/a\.txt:1:a needle here/);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
