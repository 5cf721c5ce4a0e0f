/**
 * `tern run` against a server that floods each answer and adds a tool call so the turn goes on
 * (the probe's 200 MB per reply, made 15 MiB here): the turn's output budget ends the run with
 * the exit code of a model failure, and its session stays whole and can be continued.
 */
import { equal, match, ok } from "node:assert/strict";
import { MAX_LINE_BYTES } from "../../src/session/_lines.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const FLOOD = "B".repeat(15 * 1024 * 1024);
const FLOODED_ROUNDS = 5;

Deno.test("tern run ends a turn whose answers pass 64 MiB with exit 7, its session whole and resumable", async () => {
  const server = await startScriptedServer((_request, index) =>
    index < FLOODED_ROUNDS
      ? {
        text: FLOOD,
        toolCalls: [{ name: "glob", arguments: JSON.stringify({ pattern: `*${index}*` }) }],
      }
      : { text: "Done." }, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    // A window no request reaches: no compaction, whose summary calls would take replies.
    const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_CONTEXT_WINDOW: "1000000000" };
    const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
    const run = await runTern([...args, "-o", "json", "go"], { cwd: ws.dir, env });
    equal(run.code, 7, `${run.stdout.slice(0, 2000)}\n${run.stderr}`);
    const result = JSON.parse(run.stdout);
    equal(result.exitReason, "CLIENT_ERROR");
    match(result.error, /answers in this turn passed 64 MiB together/);
    // Four answers of 15 MiB fit; the fifth passed the budget and was the last one read.
    equal(server.requests.length, 5);

    const text = await Deno.readTextFile(result.sessionPath);
    ok(text.endsWith("\n"), "the session ends in a cut-off line");
    for (const line of text.slice(0, -1).split("\n")) {
      JSON.parse(line);
      ok(new TextEncoder().encode(line).length < MAX_LINE_BYTES);
    }

    // The next message continues the session with a new budget.
    const next = await runTern([...args, "-o", "json", "-c", "go on"], { cwd: ws.dir, env });
    equal(next.code, 0, next.stderr);
    equal(JSON.parse(next.stdout).exitReason, "COMPLETED");
    const sent = server.requests.at(-1)!.modelRequest.messages;
    equal(sent.filter((message) => message.role === "tool").length, 4);
    equal(sent.at(-1)?.content, "go on");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
