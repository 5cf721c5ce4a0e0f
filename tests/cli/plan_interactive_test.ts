/** /plan in the interactive session (line mode), against the scripted model. */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

Deno.test("interactive: /plan plans, runs the steps and records the outcome in the session", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer((request) => {
      const system = String(request.messages[0]?.content ?? "");
      if (system.startsWith("You plan the work")) {
        return {
          text: JSON.stringify({
            nodes: [
              { id: "look", title: "Look around", task: "List files.", dependsOn: [] },
              { id: "report", title: "Report", task: "Say what you saw.", dependsOn: ["look"] },
            ],
          }),
        };
      }
      const user = request.messages.map((m) => String(m.content)).join("\n");
      if (user.includes('Your step ("look"')) return { text: "saw two files" };
      if (user.includes('Your step ("report"')) return { text: "reported: two files" };
      // The ordinary turn after the plan sees the plan's outcome in its history.
      return { text: user.includes("reported: two files") ? "I remember the plan." : "No plan?" };
    }, async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-plan-line-secret",
        NO_COLOR: "1",
      };
      const input = "/plan look and report\nwhat did the plan find?\n";
      const run = await runTernWithInput([], input, { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const out = run.stdout;
      match(out, /plan [0-9a-f]{8}: 2 steps/);
      match(out, /▸ look +RUNNING/);
      match(out, /✓ report +SUCCEEDED/);
      match(out, /✓ look: saw two files/);
      match(out, /2 succeeded/);
      ok(out.includes("I remember the plan."), out);
    });
  } finally {
    await ws.cleanup();
  }
});
