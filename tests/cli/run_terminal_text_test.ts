/**
 * `tern run`'s text output shows what the model and tools wrote, never what they would make a
 * terminal do: escape sequences, carriage returns and bidi overrides are removed on stdout and
 * stderr (the answer comes through as written only with --raw). The real process against the
 * scripted server.
 */
import { equal, ok } from "node:assert/strict";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const HOSTILE_ANSWER =
  "\x1b]0;pwned\x07Hello \x1b[2K\rworld\u202e \x1b]8;;https://evil.example\x1b\\" +
  "link\x1b]8;;\x1b\\ \x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b[8mhidden";
const HOSTILE_COMMAND = "rm -rf ~/x \x1b[2K\rls";

const SCRIPT: ScriptedReply[] = [
  {
    text: HOSTILE_ANSWER,
    toolCalls: [{
      id: "c1",
      name: "bash",
      arguments: JSON.stringify({ command: HOSTILE_COMMAND, description: "\x1b]0;t\x07list" }),
    }],
  },
  { text: " done\x9b2J" },
];

// deno-lint-ignore no-control-regex
const OBEYED = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

async function runHostile(extra: string[]) {
  const server = await startScriptedServer(SCRIPT, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test-terminal-123456" };
    return await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", ...extra, "list the files"],
      { cwd: ws.dir, env },
    );
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

Deno.test("tern run's text output removes escape sequences, carriage returns and bidi overrides", async () => {
  const run = await runHostile([]);
  equal(run.code, 0, run.stderr);
  ok(!OBEYED.test(run.stdout), `stdout obeys: ${JSON.stringify(run.stdout)}`);
  ok(!OBEYED.test(run.stderr), `stderr obeys: ${JSON.stringify(run.stderr)}`);
  equal(run.stdout, "Hello \nworld link hidden\n done\n");
  // The tool line shows the whole command: the carriage return cannot hide "rm -rf", and the
  // line break it became is shown as one.
  ok(run.stderr.includes("bash rm -rf ~/x ↵ls"), run.stderr);
});

Deno.test("tern run --raw prints the answer exactly as the model wrote it, stderr still safe", async () => {
  const run = await runHostile(["--raw"]);
  equal(run.code, 0, run.stderr);
  ok(run.stdout.startsWith(HOSTILE_ANSWER), JSON.stringify(run.stdout));
  ok(!OBEYED.test(run.stderr), `stderr obeys: ${JSON.stringify(run.stderr)}`);
});

Deno.test("tern run -o stream-json escapes what JSON leaves raw, and the events keep the exact text", async () => {
  const run = await runHostile(["-o", "stream-json", "--mode", "bypass"]);
  equal(run.code, 0, run.stderr);
  ok(!OBEYED.test(run.stdout), `stdout obeys: ${JSON.stringify(run.stdout.slice(0, 400))}`);
  const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const answer = events.filter((e) => e.type === "text_delta").map((e) => e.text).join("");
  equal(answer, HOSTILE_ANSWER + " done\x9b2J");
});
