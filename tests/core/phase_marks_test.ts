/**
 * The phase marks of one run (issue 21's profile switch): `tern run` with TERN_PHASE_MARKS
 * writes one JSON line per mark, in order, at exit; a file it cannot write only warns.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

interface MarkLine {
  name: string;
  at: number;
  epochMs: number;
  detail?: Record<string, string | number>;
}

Deno.test("phaseMark() with TERN_PHASE_MARKS writes the run's phases in order at exit", async () => {
  const ws = await tempWorkspace();
  try {
    const file = join(ws.home, "marks.jsonl");
    const before = Date.now();
    await Deno.writeTextFile(join(ws.dir, "notes.txt"), "hello\n");
    const script = [
      { toolCalls: [{ id: "r", name: "read", arguments: '{"path":"notes.txt"}' }] },
      { text: "hello" },
    ];
    await withScriptedServer(script, async (server) => {
      const run = await runTern(["run", "--base-url", server.baseUrl, "-m", "m", "read notes"], {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ws.home, TERN_PHASE_MARKS: file },
      });
      equal(run.code, 0, run.stderr);
    }, { chunkDelayMs: 0 });
    const all: MarkLine[] = (await Deno.readTextFile(file)).trim().split("\n")
      .map((line) => JSON.parse(line));
    // The sandbox's and the checkpoint's marks come while the model answers, in whatever order
    // their processes end: each once, after the first request and before the exit.
    const background = ["sandbox_checks", "sandbox_open", "checkpoint"];
    const at = (name: string) => all.findIndex((m) => m.name === name);
    for (const name of background) {
      equal(all.filter((m) => m.name === name).length, 1, name);
      ok(at(name) > at("request") && at(name) < at("exit"), name);
    }
    // A run of file tools alone opens no warm shell (it opens when the model names bash).
    equal(at("warm_shell"), -1, "a read-only run opened a warm shell");
    ok(at("sandbox_checks") < at("sandbox_open"), "the checks start before the sandbox opens");
    ok(at("sandbox_open") < at("tool_end"), "the call runs in the open sandbox");
    const marks = all.filter((m) => !background.includes(m.name));
    deepEqual(marks.map((m) => m.name), [
      "main",
      "config",
      "request",
      "first_byte",
      "reply_end",
      "tool_start",
      "tool_end",
      "request",
      "first_byte",
      "reply_end",
      "exit",
    ]);
    deepEqual(marks[4].detail, { round: 1 });
    deepEqual(marks[6].detail, { round: 1, name: "read" });
    deepEqual(marks[9].detail, { round: 2 });
    for (let i = 1; i < all.length; i++) ok(all[i].at >= all[i - 1].at, "in time order");
    ok(marks[0].epochMs >= before - 1000 && marks[0].epochMs <= Date.now(), "on the wall clock");
  } finally {
    await ws.cleanup();
  }
});

Deno.test("phaseMark() with an unwritable TERN_PHASE_MARKS warns and the run succeeds", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "hello" }], async (server) => {
      const run = await runTern(["run", "--base-url", server.baseUrl, "-m", "m", "say hello"], {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ws.home, TERN_PHASE_MARKS: "/proc/no-such/marks" },
      });
      equal(run.code, 0, run.stderr);
      match(run.stderr, /Cannot write the profile "\/proc\/no-such\/marks": /);
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});
