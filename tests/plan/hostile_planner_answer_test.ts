/**
 * A planner's answer built to hang the parse: hundreds of kilobytes of backticks, no line break.
 * A pattern that backtracks took minutes on it, with the process blocked (its Ctrl-C too); the
 * fences are found in linear time, so the answer is rejected at once.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import type { ModelRequest } from "../../src/llm/types.ts";
import { extractJson } from "../../src/plan/planner.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace, ternCommand } from "../support/tern_process.ts";

Deno.test("tern plan rejects an answer of backticks at once instead of hanging", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  const planner: ModelRequest[] = [];
  const server = await startScriptedServer((request) => {
    planner.push(request);
    return { text: "```".repeat(300_000) };
  }, { chunkDelayMs: 0 });
  try {
    const child = ternCommand(
      ["plan", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "task"],
      { cwd: ws.dir, env },
      "null",
    ).spawn();
    // A process blocked in a pattern answers no SIGTERM (tern's handler never runs): SIGKILL.
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const out = await child.output().finally(() => clearTimeout(timer));
    const stderr = new TextDecoder().decode(out.stderr);
    equal(out.code, 1, `exit ${out.code} (137: still parsing after 30 s) ${stderr}`);
    match(
      stderr,
      /Cannot plan the task: the model's answer was rejected twice: the answer is not JSON/,
    );
    equal(planner.length, 2);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("extractJson() finds a fenced block after backticks that close none", () => {
  deepEqual(extractJson('x```\n ````json\n{"a":1}'), { value: { a: 1 } });
  deepEqual(extractJson('```json \n{"a":2}\n```'), { value: { a: 2 } });
  deepEqual(extractJson('```JSON x\n```\n{"a":3}\n```'), { value: { a: 3 } });
  ok("problem" in extractJson("```json".repeat(200_000)));
});
