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
import { filesUnder } from "../support/files_under.ts";

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

Deno.test("tern run masks a known key in a call's id and an unknown tool's name, in the session, the audit log and the events", async () => {
  const replies: ScriptedReply[] = [
    {
      toolCalls: [
        { id: `call-${KEY}`, name: "list", arguments: JSON.stringify({ path: "." }) },
        { id: "c2", name: `tool_${KEY}`, arguments: "{}" },
      ],
    },
    // Long enough that a small window has an older part to summarise.
    { text: `done ${"and more words ".repeat(2000)}` },
  ];
  const ws = await eachOutput(replies, (all) => {
    ok(!all.includes(KEY), all);
    ok(all.includes("[REDACTED]"), all);
  }, { keep: true });
  try {
    for (const file of await filesUnder(join(ws.home, "audit"))) {
      ok(!(await Deno.readTextFile(file)).includes(KEY), file);
    }
    // A summary the model writes is masked before the session keeps it.
    const server = await startScriptedServer([{ text: `## Goal\nthe key was ${KEY}` }], {
      chunkDelayMs: 0,
    });
    try {
      const env = {
        TERN_HOME: ws.home,
        HOME: ws.home,
        TERN_API_KEY: KEY,
        TERN_CONTEXT_WINDOW: "4000",
      };
      const session = (await filesUnder(join(ws.home, "sessions")))
        .find((file) => file.endsWith(".jsonl"))!.split("/").at(-1)!.replace(/\.jsonl$/, "").split(
          "_",
        )[1];
      const compact = await runTern(
        ["sessions", "compact", "--base-url", server.baseUrl, "-m", "scripted", session],
        { cwd: ws.dir, env },
      );
      ok(!(compact.stdout + compact.stderr).includes(KEY), compact.stdout + compact.stderr);
      equal(compact.code, 0, compact.stdout + compact.stderr);
      equal(server.requests.length, 1, compact.stdout + compact.stderr);
    } finally {
      await server.close();
    }
    let summaries = 0;
    for (const file of await filesUnder(join(ws.home, "sessions"))) {
      const text = await Deno.readTextFile(file);
      ok(!text.includes(KEY), file);
      summaries += text.split("\n").filter((line) =>
        line.includes('"type":"compaction"') && line.includes("the key was [REDACTED]")
      ).length;
    }
    equal(summaries, 1);
  } finally {
    await ws.cleanup();
  }
});

/**
 * Runs `replies` through `tern run` with KEY as the API key, in text and in stream-json output;
 * `check` gets stderr and stdout together. No session file may hold the key either.
 */
async function eachOutput(
  replies: ScriptedReply[],
  check: (all: string) => void,
  options: { keep?: boolean } = {},
): Promise<Awaited<ReturnType<typeof tempWorkspace>>> {
  const ws = await tempWorkspace();
  let kept = false;
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
    kept = options.keep === true;
    return ws;
  } finally {
    if (!kept) await ws.cleanup();
  }
}
