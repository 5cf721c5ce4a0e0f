/**
 * `tern run`'s text output shows what the model and tools wrote, never what they would make a
 * terminal do: escape sequences, carriage returns and bidi overrides are removed on stdout and
 * stderr (the answer comes through as written only with --raw). The real process against the
 * scripted server.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
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
  // The tool line shows the whole command as written: the erase and the carriage return are
  // shown, not obeyed or removed, so they cannot hide "rm -rf".
  ok(run.stderr.includes("bash rm -rf ~/x ␛[2K␍ls"), run.stderr);
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

async function runScript(script: ScriptedReply[], extra: string[] = [], env = {}) {
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    return await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", ...extra, "answer"],
      {
        cwd: ws.dir,
        env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test-terminal-123456", ...env },
      },
    );
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

Deno.test("tern run into a pipe writes only the answer a retry left standing", async () => {
  for (const extra of [[], ["--raw"]]) {
    const run = await runScript([
      { text: "CUT-TEXT that the drop makes void", fault: "drop_mid_stream" },
      { text: "AFTER-CUT" },
    ], extra);
    equal(run.code, 0, run.stderr);
    equal(run.stdout, "AFTER-CUT\n", `${extra}: ${run.stderr}`);
    match(run.stderr, /model call failed: .*; retry 1 in /);
  }
});

Deno.test("tern run into a pipe writes nothing of an answer every retry cut", async () => {
  const cut: ScriptedReply = { text: "VOID partial answer", fault: "drop_mid_stream" };
  const run = await runScript([cut, cut, cut], [], { TERN_MAX_RETRIES: "2" });
  equal(run.code, 7, run.stderr);
  equal(run.stdout, "");
  equal(run.stderr.split("retry ").length - 1, 2, run.stderr);
});

Deno.test("tern mcp makes a project MCP config's warnings safe for the terminal", async () => {
  const ws = await tempWorkspace();
  try {
    const name = "\x1b]0;PWNED-TITLE\x07\x1b]52;c;ZWNobyBldmls\x07x\x1b[2K\rFAKE\u202e";
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { [name]: { command: "true" } } }),
    );
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test-terminal-123456" };
    for (const args of [["list"], ["tools", "x"], ["call", "x", "t"], ["trust", "x"]]) {
      const run = await runTern(["mcp", ...args], { cwd: ws.dir, env });
      ok(!OBEYED.test(run.stderr), `${args[0]}: ${JSON.stringify(run.stderr)}`);
      match(run.stderr, /tern: warning: Invalid MCP config [^]* is not used/, args[0]);
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("warnPerson() makes what it quotes safe for the terminal, on one line", async () => {
  const module = new URL("../../src/core/warnings.ts", import.meta.url).href;
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { warnPerson } from ${JSON.stringify(module)};` +
      `warnPerson("Skipping \\"\\x1b]0;PWNED\\x07\\x1b[2K\\rFAKE\\u202e\\x9b2J\\": why");`,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  equal(code, 0);
  equal(new TextDecoder().decode(stderr), 'tern: warning: Skipping "↵FAKE": why\n');
});
