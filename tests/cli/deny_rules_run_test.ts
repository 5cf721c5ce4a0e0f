/**
 * The person's deny rules with a path hold for the model's shell commands and folder-wide file
 * tools in a real `tern run`, not only for calls that name the path: a hostile model that runs
 * `cat` or `grep -r` through bash, or greps the workspace, gets nothing of a denied folder, and
 * cannot write a file a rule keeps from the writing tools.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { runScriptedCalls, type ScriptedCall } from "../support/scripted_calls.ts";
import { tempWorkspace } from "../support/tern_process.ts";

const SECRET = "DENIED-9c1f-CONTENT";

/**
 * `tern run --mode bypass` in `ws` with `rules` in the person's config, against a model that
 * makes `calls` one per round and then answers: the tool results it was sent, and the run.
 */
async function runCalls(
  ws: { dir: string; home: string },
  rules: unknown[],
  calls: ScriptedCall[],
): Promise<{ results: string[]; code: number; stderr: string }> {
  await Deno.writeTextFile(join(ws.home, "config.jsonc"), JSON.stringify({ rules }));
  const { results, code, stderr } = await runScriptedCalls(ws, calls, {
    TERN_API_KEY: "sk-test-x",
  });
  return { results, code, stderr };
}

testWith(
  [bwrapNeed],
  "tern run: deny rules with a path hold for bash and grep over the workspace",
  async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.mkdir(join(ws.dir, "secrets"));
      await Deno.writeTextFile(join(ws.dir, "secrets/key.txt"), `${SECRET}\n`);
      await Deno.writeTextFile(join(ws.dir, "package.json"), '{"name": "app"}\n');
      await Deno.writeTextFile(join(ws.dir, "main.ts"), "console.log(1);\n");
      const rules = [
        { action: "deny", path: "secrets/**" },
        { action: "deny", tool: "write", path: "package.json" },
      ];
      const postinstall = `echo '{"scripts":{"postinstall":"x"}}' > package.json; echo wrote`;
      const calls = [
        { name: "bash", args: { command: "cat secrets/key.txt; grep -r DENIED . ; echo end" } },
        { name: "bash", args: { command: postinstall } },
        { name: "grep", args: { pattern: "DENIED", path: "." } },
        { name: "list", args: { path: "secrets" } },
      ];
      const { results, code, stderr } = await runCalls(ws, rules, calls);
      equal(code, 0, stderr);
      equal(results.length, calls.length, results.join("\n---\n"));
      for (const result of results) ok(!result.includes(SECRET), result);
      ok(results[0].includes("end"), results[0]);
      ok(!results[2].includes("key.txt"), results[2]);
      ok(!results[3].includes("key.txt"), results[3]);
      equal(await Deno.readTextFile(join(ws.dir, "package.json")), '{"name": "app"}\n');
      equal(await Deno.readTextFile(join(ws.dir, "secrets/key.txt")), `${SECRET}\n`);
    } finally {
      await ws.cleanup();
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run: a command that leaves a name the deny search cannot hide fails the next command, not the run",
  async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.writeTextFile(join(ws.dir, "package.json"), '{"name": "app"}\n');
      const made =
        `echo '{"scripts":{"postinstall":"x"}}' > package.json; touch $'z\\xff'; echo made`;
      const { results, code, stderr } = await runCalls(ws, [{ action: "deny", path: "**/.env" }], [
        { name: "bash", args: { command: made } },
        { name: "bash", args: { command: "echo next" } },
      ]);
      equal(code, 0, stderr);
      equal(results.length, 2, results.join("\n---\n"));
      ok(results[0].includes("made"), results[0]);
      ok(results[1].includes("not UTF-8") && !results[1].includes("next"), results[1]);
      // The change to a file that runs code on the host is still reported.
      ok(stderr.includes("package.json"), stderr);
    } finally {
      await ws.cleanup();
    }
  },
);
