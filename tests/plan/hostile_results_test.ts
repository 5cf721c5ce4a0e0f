/**
 * A worker's answer is the model's text, up to the loop's 16 MiB: kept whole as a step's result,
 * each dependent's prompt would carry every dependency's (49 of them: most of a gigabyte), and
 * every record of the plan's state with it. A result is kept to its head and tail.
 */
import { equal, match, ok } from "node:assert/strict";
import type { ModelRequest } from "../../src/llm/types.ts";
import { MAX_RESULT_CHARS } from "../../src/plan/executor.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const userText = (request: ModelRequest) =>
  String(request.messages.find((m) => m.role === "user")?.content ?? "");
const stepOf = (request: ModelRequest) => /Your step \("([^"]+)"/.exec(userText(request))?.[1];

Deno.test("tern plan keeps a step's result of megabytes to its head and tail, for its dependents too", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-plan-results-1" };
  const deps = ["a1", "a2", "a3"];
  const nodes = [
    ...deps.map((id) => ({ id, title: `Step ${id}`, task: `Do ${id}.`, dependsOn: [] })),
    { id: "z", title: "Step z", task: "Do z.", dependsOn: deps },
    { id: "f", title: "Step f", task: "Do f.", dependsOn: [] },
  ];
  const huge = (id: string) => `START-${id} ${"x".repeat(3_000_000)} END-${id}`;
  const prompts: string[] = [];
  const server = await startScriptedServer((request) => {
    const system = String(request.messages[0]?.content ?? "");
    if (system.startsWith("You plan the work")) return { text: JSON.stringify({ nodes }) };
    if (system.startsWith("You repair the plan")) return { text: '{"nodes":[]}' };
    const id = stepOf(request) ?? "?";
    if (id === "z") {
      prompts.push(userText(request));
      return { text: "z done" };
    }
    // A failure's reason is held to the same bound.
    if (id === "f") return { text: `FAILED: ${huge(id)}` };
    return { text: huge(id) };
  }, { chunkDelayMs: 0 });
  try {
    const flags = ["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
    const run = await runTern(["plan", ...flags, "-o", "json", "task"], { cwd: ws.dir, env });
    const out = JSON.parse(run.stdout) as {
      nodes: Array<{ id: string; state: string; result?: string; error?: string }>;
    };
    for (const node of out.nodes.filter((n) => n.id !== "z")) {
      const text = node.result ?? node.error ?? "";
      ok(text.length <= MAX_RESULT_CHARS, `${node.id}: ${text.length} characters`);
      match(
        text,
        new RegExp(
          `^(reported by the worker: )?START-${node.id} x+\\n\\[\\.\\.\\. \\d+ characters`,
        ),
      );
      match(text, new RegExp(`END-${node.id}$`));
    }
    equal(out.nodes.find((n) => n.id === "f")?.state, "FAILED");
    equal(out.nodes.find((n) => n.id === "z")?.state, "SUCCEEDED");
    equal(prompts.length, 1);
    ok(prompts[0].length < deps.length * MAX_RESULT_CHARS + 5_000, `${prompts[0].length}`);
    for (const id of deps) {
      match(prompts[0], new RegExp(`START-${id} x+\\n\\[\\.\\.\\. \\d+ characters`));
      match(prompts[0], new RegExp(`END-${id}\\n`));
    }
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
