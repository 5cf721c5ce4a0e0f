/**
 * The person's "ask" rules hold for a subagent as for its parent: a child reviews its calls in
 * AUTO, yet a call an ask rule matches goes to the parent's person under an ASK parent (and under
 * an AUTO parent whose autoAskRules is "person"), denied when there is none — never settled by
 * the child's reviewer, whose model the parent's model may choose.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { REVIEWER_SYSTEM } from "../../src/agent/auto_reviewer.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { loadSession } from "../../src/session/load.ts";
import { listSessions } from "../../src/session/paths.ts";
import { bwrapNeed, tmuxNeed } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { dialogReady, PLACEHOLDER, send, withTern } from "../support/tmux_run.ts";
import { allText, call, firstUser, records, until } from "./_helpers.ts";

const SECRET = "TOPSECRET-ask-rule-7391";
const RULES = JSON.stringify({ rules: [{ action: "ask", tool: "read", path: "secret.txt" }] });

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
const isReviewer = (request: ModelRequest) => request.messages[0]?.content === REVIEWER_SYSTEM;

/**
 * The parent hands a child only read-only tools (no approval needed for that); the child reads
 * secret.txt and reports what it got. The reviewer allows everything it is asked.
 */
function script(request: ModelRequest): ScriptedReply {
  if (isReviewer(request)) return { text: '{"decision":"allow","reason":"fine"}' };
  if (isChild(request)) {
    const result = request.messages.find((m) => m.role === "tool");
    if (result === undefined) return call("read", { path: "secret.txt" }, "r1");
    return { text: `told: ${result.content.replace(/\n/g, " ")}` };
  }
  if (!allText(request).includes("Started subagent")) {
    return call("spawn_agent", { task_name: "reader", message: "CHILD read it" }, "s1");
  }
  return allText(request).includes("[subagent ") ? { text: "parent done" } : call(
    "wait_agent",
    {},
    "w1",
  );
}

async function completionOf(home: string): Promise<Record<string, unknown>> {
  const parent = (await listSessions(home)).find((s) => s.subagentOf === undefined)!;
  const entries = (await loadSession(parent.path)).entries;
  await until(() => records(entries, "completion").length > 0, "the completion");
  return records(entries, "completion")[0];
}

for (
  const [parent, mode, extra] of [
    ["an ASK parent", "ask", []],
    ["an AUTO parent with --auto-ask-rules person", "auto", ["--auto-ask-rules", "person"]],
  ] as const
) {
  Deno.test(`a child of ${parent} and no person may not read what an ask rule covers`, async () => {
    const server = await startScriptedServer(script, { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    try {
      await Deno.writeTextFile(join(ws.dir, "secret.txt"), `${SECRET}\n`);
      await Deno.writeTextFile(join(ws.home, "config.jsonc"), RULES);
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
      const args = [
        "run",
        "--base-url",
        server.baseUrl,
        "-m",
        "scripted",
        "--mode",
        mode,
        ...extra,
        "go",
      ];
      const run = await runTern(args, { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const completion = await completionOf(ws.home);
      equal(completion.status, "completed", String(completion.error));
      match(String(completion.content), /told: .*POLICY_DENIED/);
      ok(!String(completion.content).includes(SECRET), String(completion.content));
      ok(!run.stdout.includes(SECRET));
      // The rule's question was never put to the child's reviewer.
      equal(server.requests.filter((r) => isReviewer(r.modelRequest)).length, 0);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  });
}

Deno.test("a child of an AUTO parent leaves an ask rule to its reviewer, as the parent does", async () => {
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, "secret.txt"), `${SECRET}\n`);
    await Deno.writeTextFile(join(ws.home, "config.jsonc"), RULES);
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
    const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "auto", "go"];
    const run = await runTern(args, { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    ok(String((await completionOf(ws.home)).content).includes(SECRET));
    equal(server.requests.filter((r) => isReviewer(r.modelRequest)).length, 1);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test({
  name: "an ASK parent's person is asked for a child's call an ask rule matches, and decides it",
  ignore: !bwrapNeed.ok || !tmuxNeed.ok,
  fn: async () => {
    const options = {
      server: { chunkDelayMs: 0 },
      setup: async (dir: string, home: string) => {
        await Deno.writeTextFile(join(dir, "secret.txt"), `${SECRET}\n`);
        await Deno.writeTextFile(join(home, "config.jsonc"), RULES);
      },
    };
    await withTern(script, options, async ({ tern, home, server }) => {
      await send(tern, "go");
      // No approval to hand over read-only tools; the child's read comes up as the subagent's.
      await tern.waitForText("Asked by the ask rule");
      await tern.waitForText('for subagent "reader"');
      await tern.waitForText("[subagent reader] read secret.txt");
      await dialogReady();
      await tern.keys("n");
      await tern.waitForText("parent done");
      await tern.waitForText(PLACEHOLDER);
      const completion = await completionOf(home);
      match(String(completion.content), /told: .*denied/);
      ok(!String(completion.content).includes(SECRET));
      equal(server.requests.filter((r) => isReviewer(r.modelRequest)).length, 0);
    });
  },
});
