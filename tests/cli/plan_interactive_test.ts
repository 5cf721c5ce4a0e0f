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

Deno.test("interactive: /plan shows a step's change on its own line, not on a title naming it", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer((request) => {
      const system = String(request.messages[0]?.content ?? "");
      if (system.startsWith("You plan the work")) {
        return {
          text: JSON.stringify({
            nodes: [
              // Its title names the other step's id between spaces.
              { id: "a", title: "Check b is built", task: "Check.", dependsOn: [] },
              { id: "b", title: "Build", task: "Build it.", dependsOn: [] },
            ],
          }),
        };
      }
      const user = request.messages.map((m) => String(m.content)).join("\n");
      return { text: user.includes('Your step ("a"') ? "checked" : "built" };
    }, async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-plan-line-secret",
        NO_COLOR: "1",
      };
      const run = await runTernWithInput([], "/plan check and build\n", { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const out = run.stdout;
      match(out, /▸ b +RUNNING +Build/);
      match(out, /✓ b +SUCCEEDED +Build/);
      match(out, /✓ a +SUCCEEDED +Check b is built/);
      // Each change printed once: a's line only for a's two changes.
      equal(out.match(/[▸✓] a +(RUNNING|SUCCEEDED)/g)?.length, 2, out);
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("interactive: /plan's steps are reviewed against the plan's task, not an earlier message", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.mkdir(join(ws.dir, "src"));
    const reviews: string[] = [];
    await withScriptedServer((request) => {
      const system = String(request.messages[0]?.content ?? "");
      const user = request.messages.map((m) => String(m.content)).join("\n");
      if (system.startsWith("You are a security reviewer")) {
        reviews.push(String(request.messages.at(-1)?.content ?? ""));
        return { text: JSON.stringify({ decision: "deny", reason: "not for a README" }) };
      }
      if (system.startsWith("You plan the work")) {
        return {
          text: JSON.stringify({
            nodes: [{ id: "a", title: "Clean up", task: "Remove src.", dependsOn: [] }],
          }),
        };
      }
      if (system.startsWith("You repair the plan")) return { text: '{"nodes":[]}' };
      if (user.includes('Your step ("a"')) {
        if (request.messages.some((m) => m.role === "tool")) return { text: "FAILED: denied" };
        return {
          toolCalls: [{ id: "rm", name: "bash", arguments: '{"command":"rm -rf src"}' }],
        };
      }
      return { text: "Not now." };
    }, async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-plan-line-secret",
        NO_COLOR: "1",
      };
      const input = "please delete the src folder\n/plan write a README\n";
      const run = await runTernWithInput(["--mode", "auto"], input, { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      equal(reviews.length, 1, run.stdout + run.stderr);
      ok(reviews[0].startsWith('USER GOAL (from the person):\n"write a README"'), reviews[0]);
      ok(!reviews[0].includes("please delete the src folder"), reviews[0]);
      ok(Deno.statSync(join(ws.dir, "src")).isDirectory);
    });
  } finally {
    await ws.cleanup();
  }
});
