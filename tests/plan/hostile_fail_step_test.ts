/**
 * End-to-end: a step's worker that reports failure with a key tern knows of in its reason. The
 * reason becomes the step's error, which `tern plan` shows, prints as JSON and records: never
 * with the key. The real process against the scripted model.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const system = (request: ModelRequest) => String(request.messages[0]?.content ?? "");

/** Every session file's text under `home`. */
async function sessionsText(home: string): Promise<string> {
  let text = "";
  const sessions = join(home, "sessions");
  for await (const dir of Deno.readDir(sessions)) {
    for await (const file of Deno.readDir(join(sessions, dir.name))) {
      text += await Deno.readTextFile(join(sessions, dir.name, file.name));
    }
  }
  return text;
}

Deno.test("tern plan never shows a known key a worker gave fail_step as its reason", async () => {
  const ws = await tempWorkspace();
  // A key tern holds but did not send to this server (the one it sent is taken out of the
  // server's stream before anything reads it).
  const OTHER = "sk-ant-other-KEY-0123456789abcdefXYZ";
  const server = await startScriptedServer((request) => {
    if (system(request).startsWith("You plan the work")) {
      return { text: JSON.stringify({ nodes: [{ id: "a", title: "A", task: "Do a." }] }) };
    }
    if (request.messages.some((message) => message.role === "tool")) return { text: "stopped" };
    const reason = `the deploy needs ${OTHER} and I will not use it`;
    return {
      toolCalls: [{ id: "c1", name: "fail_step", arguments: JSON.stringify({ reason }) }],
    };
  }, { chunkDelayMs: 0 });
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home, ANTHROPIC_API_KEY: OTHER, NO_COLOR: "1" };
    for (const output of ["text", "json", "stream-json"]) {
      const run = await runTern(
        [
          "plan",
          "--base-url",
          server.baseUrl,
          "-m",
          "scripted",
          "--mode",
          "bypass",
          "-o",
          output,
          "task",
        ],
        { cwd: ws.dir, env: { ...env, TERN_API_KEY: "sk-plan-fail-step-0001ABCDEF" } },
      );
      equal(run.code, 1, run.stderr);
      ok((run.stdout + run.stderr).includes("I will not use it"), run.stdout + run.stderr);
      ok(!(run.stdout + run.stderr).includes(OTHER), run.stdout + run.stderr);
    }
    ok(!(await sessionsText(ws.home)).includes(OTHER));
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
