/**
 * A key the model writes into a tool call's arguments never reaches what tern prints or keeps:
 * the tool line on stderr, the JSON event stream and the session show it masked. The real
 * `tern run`.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-test-MASKEDCALL-7f3a9c2e1b";

Deno.test("tern run masks a known key in a tool call's arguments on the tool line and in events", async () => {
  const ws = await tempWorkspace();
  try {
    for (const output of ["text", "stream-json"]) {
      const server = await startScriptedServer([
        {
          toolCalls: [{
            id: "c1",
            name: "read",
            arguments: JSON.stringify({ path: `notes-${KEY}.txt` }),
          }],
        },
        { text: "done" },
      ] as ScriptedReply[], { chunkDelayMs: 0 });
      try {
        const run = await runTern(
          [
            "run",
            ...["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"],
            ...["--output", output, "go"],
          ],
          { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY } },
        );
        equal(run.code, 0, run.stderr);
        ok(!run.stderr.includes(KEY) && !run.stdout.includes(KEY), run.stderr + run.stdout);
        ok((run.stderr + run.stdout).includes("[REDACTED]"), run.stderr + run.stdout);
        // Nor does the session keep it.
        for (const file of await filesUnder(join(ws.home, "sessions"))) {
          ok(!(await Deno.readTextFile(file)).includes(KEY), file);
        }
      } finally {
        await server.close();
      }
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern run masks a known key the model streams in its answer and its reasoning, split across chunks", async () => {
  const ws = await tempWorkspace();
  try {
    for (const output of ["text", "stream-json"]) {
      const server = await startScriptedServer([
        { thinking: `I recall ${KEY} from before`, text: `The key is ${KEY}, as you asked.` },
      ] as ScriptedReply[], { chunkDelayMs: 0 });
      try {
        const run = await runTern(
          [
            "run",
            ...["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"],
            ...["--output", output, "go"],
          ],
          { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY } },
        );
        equal(run.code, 0, run.stderr);
        const all = run.stderr + run.stdout;
        // No piece of the key either: not even its first half.
        ok(!all.includes(KEY.slice(0, KEY.length / 2)), all);
        ok(all.includes("The key is [REDACTED], as you asked."), all);
        for (const file of await filesUnder(join(ws.home, "sessions"))) {
          ok(!(await Deno.readTextFile(file)).includes(KEY), file);
        }
      } finally {
        await server.close();
      }
    }
  } finally {
    await ws.cleanup();
  }
});

async function filesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(...await filesUnder(path));
    else if (entry.isFile) files.push(path);
  }
  return files;
}
