/**
 * End-to-end: `rewindMaxFiles` (the person's setting) bounds the files one checkpoint reads. A
 * workspace with more files than it allows gets no checkpoint, and the warning names the setting
 * that lets one be taken; raised, the same run is checkpointed.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { readRecords } from "../../src/harness/rewind/records.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** One `bash` call that writes a file, then "done". */
function script(request: ModelRequest): ScriptedReply {
  if (request.messages.some((m) => m.role === "tool")) return { text: "done" };
  const args = JSON.stringify({ command: "echo made > made.txt" });
  return { toolCalls: [{ id: "c1", name: "bash", arguments: args }] };
}

/** The kinds of the rewind records the run's session left. */
async function recordKinds(home: string): Promise<string[]> {
  const sessions = join(home, "sessions");
  const folder = join(sessions, [...Deno.readDirSync(sessions)][0].name);
  const session = [...Deno.readDirSync(folder)].find((e) => e.name.endsWith(".jsonl"))!.name;
  return (await readRecords(join(folder, session))).map((record) => record.kind);
}

Deno.test("tern run: past rewindMaxFiles a checkpoint is refused naming the setting; raised, it is taken", async () => {
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  for (const [limit, taken] of [["3", false], ["1000", true]] as const) {
    const ws = await tempWorkspace();
    try {
      for (let i = 0; i < 5; i++) Deno.writeTextFileSync(join(ws.dir, `f${i}.txt`), `${i}\n`);
      const run = await runTern(["run", "write a file"], {
        cwd: ws.dir,
        env: {
          TERN_HOME: ws.home,
          HOME: ws.home,
          TERN_API_KEY: "sk-test-max-files",
          TERN_BASE_URL: server.baseUrl,
          TERN_MODE: "bypass",
          TERN_MODEL: "scripted",
          TERN_REWIND_MAX_FILES: limit,
        },
      });
      equal(run.code, 0, run.stderr);
      equal(Deno.readTextFileSync(join(ws.dir, "made.txt")), "made\n");
      if (taken) {
        ok(!run.stderr.includes("rewindMaxFiles"), run.stderr);
        equal((await recordKinds(ws.home)).join(" "), "before after");
      } else {
        match(
          run.stderr,
          /5 files changed since the last checkpoint, more than 3 \(the rewindMaxFiles setting/,
        );
        equal((await recordKinds(ws.home)).join(" "), "failed");
      }
    } finally {
      await ws.cleanup();
    }
  }
  await server.close();
});
