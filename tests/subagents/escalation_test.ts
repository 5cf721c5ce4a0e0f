/**
 * Escalation: a child's call only a person may allow goes up to the parent, which settles it
 * under its own rules — denied by a BYPASS parent (which grants nothing beyond the profile),
 * shown to the person by an ASK parent (in tmux), withdrawn when the child stops waiting.
 */
import { equal, match, ok } from "node:assert/strict";
import { REVIEWER_SYSTEM } from "../../src/agent/auto_reviewer.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { loadSession } from "../../src/session/load.ts";
import { listSessions } from "../../src/session/paths.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed, tmuxNeed } from "../support/needs.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { dialogReady, PLACEHOLDER, send, withTern } from "../support/tmux_run.ts";
import { allText, call, firstUser, records, until } from "./_helpers.ts";

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
const shown = (request: ModelRequest) => allText(request).split("[subagent ").length - 1;

/** The child asks to run `make` outside the sandbox, then reports what it was told. */
function script(request: ModelRequest): ScriptedReply {
  if (isChild(request)) {
    const result = request.messages.find((m) => m.role === "tool");
    if (result === undefined) {
      return call("request_permissions", {
        reason: "build it",
        commands: ["make"],
        without_sandbox: true,
      }, "p1");
    }
    return { text: `told: ${result.content.replace(/\n/g, " ")}` };
  }
  return parentReply(request, {
    task_name: "builder",
    message: "CHILD build",
    tools: ["request_permissions"],
  });
}

/** The parent's side: spawn the child with `spawn`, wait for it, then answer. */
function parentReply(request: ModelRequest, spawn: Record<string, unknown>): ScriptedReply {
  if (!allText(request).includes("Started subagent")) return call("spawn_agent", spawn, "s1");
  return shown(request) === 0 ? call("wait_agent", {}, "w1") : { text: "parent done" };
}

Deno.test("a child's escalation to a BYPASS parent is denied: the parent grants nothing more", async () => {
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
    const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"];
    const run = await runTern(args, { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    const parent = (await listSessions(ws.home)).find((s) => s.subagentOf === undefined)!;
    const [completion] = records((await loadSession(parent.path)).entries, "completion");
    // Decided as the BYPASS parent decides (it grants nothing beyond the sandbox profile), not
    // by the child's own lack of a person ("no person is there to ask").
    match(String(completion.content), /told: .*--mode bypass grants nothing beyond the sandbox/);
    ok(!String(completion.content).includes("no person is there to ask"));
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test({
  name: "an ASK parent shows a child's escalation to the person, whose answer the child gets",
  ignore: !bwrapNeed.ok || !tmuxNeed.ok,
  fn: async () => {
    await withTern(script, { server: { chunkDelayMs: 0 } }, async ({ tern, home }) => {
      await send(tern, "go");
      // First the person approves handing request_permissions to the child (ASK mode)...
      await tern.waitForText('subagent "builder" with "request_permissions"');
      await dialogReady();
      await tern.keys("y");
      // ...then the child's own request comes up, marked as the subagent's.
      await tern.waitForText('Asked by subagent "builder"');
      await dialogReady();
      await tern.keys("y");
      await tern.waitForText("parent done");
      await tern.waitForText(PLACEHOLDER);
      const parent = (await listSessions(home)).find((s) => s.subagentOf === undefined)!;
      const [completion] = records((await loadSession(parent.path)).entries, "completion");
      match(String(completion.content), /told: .*granted|told: .*allowed/i);
    });
  },
});

Deno.test({
  name: "a child's escalation nobody answers is denied at its timeout and withdrawn",
  ignore: !bwrapNeed.ok || !tmuxNeed.ok,
  fn: async () => {
    const options = {
      server: { chunkDelayMs: 0 },
      // Long enough for the dialog to be seen on a loaded machine before it goes.
      env: { TERN_SUBAGENT_ESCALATION_TIMEOUT_MS: "5000" },
    };
    await withTern(script, options, async ({ tern, home }) => {
      await send(tern, "go");
      await tern.waitForText('subagent "builder" with "request_permissions"');
      await dialogReady();
      await tern.keys("y");
      await tern.waitForText('Asked by subagent "builder"');
      // Nobody answers: the child stops waiting, the dialog goes, the run ends.
      await tern.waitForText("parent done", { timeoutMs: 60_000 });
      await tern.waitForText(PLACEHOLDER);
      const parent = (await listSessions(home)).find((s) => s.subagentOf === undefined)!;
      await until(async () => {
        const entries = (await loadSession(parent.path)).entries;
        return records(entries, "completion").length === 1;
      }, "the completion");
      const [completion] = records((await loadSession(parent.path)).entries, "completion");
      match(String(completion.content), /told: .*(No answer|denied)/);
    });
  },
});

Deno.test("a BYPASS parent's child may not fetch from the web its profile gives no network to", async () => {
  // The child reviews in AUTO; before, its reviewer allowed what its BYPASS parent refuses.
  let pageHits = 0;
  const page = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    pageHits++;
    return new Response("secret page");
  });
  const url = `http://127.0.0.1:${page.addr.port}/leak?data=workspace`;
  const server = await startScriptedServer((request: ModelRequest): ScriptedReply => {
    if (isChild(request)) {
      const result = request.messages.find((m) => m.role === "tool");
      if (result === undefined) return call("web_fetch", { url }, "f1");
      return { text: `told: ${result.content.replace(/\n/g, " ")}` };
    }
    // The reviewer's requests: allow everything.
    if (request.messages[0]?.content === REVIEWER_SYSTEM) {
      return { text: '{"decision":"allow","reason":"fine"}' };
    }
    return parentReply(request, {
      task_name: "fetcher",
      message: "CHILD fetch",
      tools: ["web_fetch"],
    });
  }, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
    const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"];
    const run = await runTern(args, { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    const parent = (await listSessions(ws.home)).find((s) => s.subagentOf === undefined)!;
    const [completion] = records((await loadSession(parent.path)).entries, "completion");
    match(String(completion.content), /told: .*autoNetwork is "never"/);
    equal(pageHits, 0);
  } finally {
    await server.close();
    await page.shutdown();
    await ws.cleanup();
  }
});
