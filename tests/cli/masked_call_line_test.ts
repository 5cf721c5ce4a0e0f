/**
 * A key the model writes never reaches what tern prints or keeps: in a tool call's arguments
 * (the tool line on stderr), in its streamed answer and reasoning (stdout, JSON events), and in
 * the session. The real `tern run`.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-test-MASKEDCALL-7f3a9c2e1b";

Deno.test("tern run masks a known key in a tool call's arguments on the tool line and in events", async () => {
  const replies: ScriptedReply[] = [
    {
      toolCalls: [{
        id: "c1",
        name: "read",
        arguments: JSON.stringify({ path: `notes-${KEY}.txt` }),
      }],
    },
    { text: "done" },
  ];
  await eachOutput(replies, (all) => {
    ok(!all.includes(KEY), all);
    ok(all.includes("[REDACTED]"), all);
  });
});

Deno.test("tern run masks a known key the model streams in its answer and its reasoning, split across chunks", async () => {
  const replies: ScriptedReply[] = [
    { thinking: `I recall ${KEY} from before`, text: `The key is ${KEY}, as you asked.` },
  ];
  await eachOutput(replies, (all) => {
    // No piece of the key either: not even its first half.
    ok(!all.includes(KEY.slice(0, KEY.length / 2)), all);
    ok(all.includes("The key is [REDACTED], as you asked."), all);
  });
});

/**
 * Runs `replies` through `tern run` with KEY as the API key, in text and in stream-json output;
 * `check` gets stderr and stdout together. No session file may hold the key either.
 */
async function eachOutput(replies: ScriptedReply[], check: (all: string) => void): Promise<void> {
  const ws = await tempWorkspace();
  try {
    for (const output of ["text", "stream-json"]) {
      const server = await startScriptedServer(replies, { chunkDelayMs: 0 });
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
        check(run.stderr + run.stdout);
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
}

async function filesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(...await filesUnder(path));
    else if (entry.isFile) files.push(path);
  }
  return files;
}
