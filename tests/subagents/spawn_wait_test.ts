/** spawn_agent and wait_agent through the real CLI: a parent `tern run` and its `tern child`ren. */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, deliveries, firstUser, records, sessionsOf } from "./_helpers.ts";

type Script = (request: ModelRequest, index: number) => ScriptedReply;

/** Runs `tern run` (bypass, JSON output) against `script`, then hands over what is left. */
async function runParent(
  script: Script,
  options: {
    env?: Record<string, string>;
    args?: string[];
    beforeReply?: (request: ModelRequest) => Promise<void>;
    /** Runs `tern args` in the workspace once the parent is done (before the cleanup). */
    then?: string[];
  } = {},
) {
  const server = await startScriptedServer(script, {
    chunkDelayMs: 0,
    beforeReply: options.beforeReply,
  });
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k", ...options.env };
    const run = await runTern(
      [
        "run",
        "--base-url",
        server.baseUrl,
        "-m",
        "scripted",
        "--mode",
        "bypass",
        "-o",
        "json",
        ...options.args ?? [],
        "go",
      ],
      { cwd: ws.dir, env },
    );
    const after = options.then ? await runTern(options.then, { cwd: ws.dir, env }) : undefined;
    const sessions = await sessionsOf(ws.home);
    const parent = sessions.find((s) => s.header.subagentOf === undefined)!;
    const children = sessions.filter((s) => s.header.subagentOf !== undefined);
    return {
      run,
      after,
      requests: server.requests.map((r) => r.modelRequest),
      parent,
      children,
    };
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");

/** How many completions the parent's transcript shows. */
const shown = (request: ModelRequest) => allText(request).split("[subagent ").length - 1;

Deno.test("spawn_agent() runs a child whose answer wait_agent() returns once", async () => {
  const script: Script = (request) => {
    if (isChild(request)) return { text: "child found 42" };
    const text = allText(request);
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "count", message: "CHILD count things" }, "s1");
    }
    if (!text.includes("child found 42")) return call("wait_agent", {}, "w1");
    return { text: "parent done" };
  };
  const { run, requests, parent, children, after } = await runParent(script, {
    then: ["sessions", "tree", "-c"],
  });
  equal(run.code, 0, run.stderr);
  equal(JSON.parse(run.stdout).text, "parent done");
  // `tern sessions tree` of the parent (-c: never a child) lists the child session under it.
  equal(after?.code, 0, after?.stderr);
  const tree = after!.stdout;
  match(tree, /subagent spawn count → child/);
  match(
    tree,
    new RegExp(
      String.raw`subagents:\n  ${children[0]?.header.id}  count \(agent-\w+, run-\w+\)  completed`,
    ),
  );
  equal(children.length, 1);
  const child = children[0];
  equal(child.header.subagentOf?.sessionId, parent.header.id);
  const [spawn] = records(parent.entries, "spawn");
  const [completion] = records(parent.entries, "completion");
  equal(spawn.childSessionId, child.header.id);
  equal(completion.status, "completed");
  equal(completion.content, "child found 42");
  equal(deliveries(parent.entries, String(spawn.runId)).length, 1);
  // The child saw only its message, never the parent's transcript, and only its tools.
  const childRequest = requests.find(isChild)!;
  ok(!allText(childRequest).includes("go"));
  deepEqual(childRequest.tools?.map((tool) => tool.name).sort(), ["glob", "grep", "read"]);
});

Deno.test("spawn_agent() runs children at once, up to maxSubagents", async () => {
  // Each child's reply waits until both children have asked: they run concurrently.
  const bothAsked = Promise.withResolvers<void>();
  let childRequests = 0;
  const beforeReply = async (request: ModelRequest) => {
    if (!isChild(request)) return;
    if (++childRequests === 2) bothAsked.resolve();
    await bothAsked.promise;
  };
  const script: Script = (request) => {
    if (isChild(request)) return { text: `answer of ${firstUser(request)}` };
    const text = allText(request);
    if (!text.includes("Started subagent")) {
      return {
        toolCalls: ["a", "b", "c"].map((name, i) => ({
          id: `s${i}`,
          name: "spawn_agent",
          arguments: JSON.stringify({ task_name: name, message: `CHILD ${name}` }),
        })),
      };
    }
    return shown(request) < 2 ? call("wait_agent", {}, `w${shown(request)}`) : { text: "both" };
  };
  const { run, requests, parent, children } = await runParent(script, {
    env: { TERN_MAX_SUBAGENTS: "2" },
    beforeReply,
  });
  equal(run.code, 0, run.stderr);
  equal(children.length, 2);
  const spawnResults = requests.at(-1)!.messages.filter((m) => m.role === "tool").slice(0, 3);
  equal(spawnResults.filter((m) => m.content.includes("Started subagent")).length, 2);
  match(spawnResults[2].content, /2 subagents run already \(the limit, maxSubagents\)/);
  const completions = records(parent.entries, "completion");
  deepEqual(completions.map((c) => c.content).sort(), ["answer of CHILD a", "answer of CHILD b"]);
  for (const completion of completions) {
    equal(deliveries(parent.entries, String(completion.runId)).length, 1);
  }
  equal(shown(requests.at(-1)!), 2);
});

Deno.test("wait_agent() times out without stopping the child, which a later wait collects", async () => {
  const timedOut = Promise.withResolvers<void>();
  const beforeReply = async (request: ModelRequest) => {
    if (allText(request).includes("No subagent finished")) timedOut.resolve();
    if (isChild(request)) await timedOut.promise;
  };
  const script: Script = (request) => {
    if (isChild(request)) return { text: "slow answer" };
    const text = allText(request);
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "slow", message: "CHILD slow" }, "s1");
    }
    if (!text.includes("No subagent finished")) return call("wait_agent", { timeout_ms: 50 }, "w1");
    if (!text.includes("slow answer")) return call("wait_agent", {}, "w2");
    return { text: "collected" };
  };
  const { run, requests, parent } = await runParent(script, { beforeReply });
  equal(run.code, 0, run.stderr);
  equal(JSON.parse(run.stdout).text, "collected");
  const waits = requests.at(-1)!.messages.filter((m) => m.role === "tool").slice(1);
  match(waits[0].content, /No subagent finished within 50 ms; still running: slow/);
  match(waits[1].content, /completed\]\n--- BEGIN SUBAGENT ANSWER \w{8} .*\nslow answer\n--- END/);
  const [completion] = records(parent.entries, "completion");
  equal(completion.status, "completed");
});

Deno.test("spawn_agent() refuses unknown tool names and a model outside the catalog", async () => {
  const script: Script = (request) => {
    const text = allText(request);
    if (!text.includes("not a tool name")) {
      return call("spawn_agent", { task_name: "x", message: "CHILD", tools: ["rm_rf"] }, "s1");
    }
    if (!text.includes("not in the model catalog")) {
      return call("spawn_agent", { task_name: "y", message: "CHILD", model: "nope-9" }, "s2");
    }
    return { text: "refused" };
  };
  const { run, requests, parent, children } = await runParent(script);
  equal(run.code, 0, run.stderr);
  equal(children.length, 0);
  equal(records(parent.entries, "spawn").length, 0);
  const results = requests.at(-1)!.messages.filter((m) => m.role === "tool");
  match(results[0].content, /Cannot give a subagent "rm_rf": not a tool name; choose from read/);
  match(results[1].content, /Cannot use model "nope-9" for a subagent/);
});

Deno.test("a child that hangs is stopped at the time limit", async () => {
  const script: Script = (request) => {
    if (isChild(request)) return { fault: "hang" };
    const text = allText(request);
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "hang", message: "CHILD hang" }, "s1");
    }
    return shown(request) < 1 ? call("wait_agent", {}, "w1") : { text: "over" };
  };
  const { run, parent } = await runParent(script, { env: { TERN_SUBAGENT_TIMEOUT_MS: "1500" } });
  equal(run.code, 0, run.stderr);
  const [completion] = records(parent.entries, "completion");
  equal(completion.status, "timed_out");
  equal(deliveries(parent.entries, String(completion.runId)).length, 1);
});

Deno.test("a child that exceeds its rounds (the parent's maxRounds) is stopped and fails", async () => {
  const script: Script = (request) => {
    if (isChild(request)) return call("glob", { pattern: "*" }, "g");
    const text = allText(request);
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "loop", message: "CHILD loop" }, "s1");
    }
    return shown(request) < 1 ? call("wait_agent", {}, "w1") : { text: "over" };
  };
  const { run, parent, requests } = await runParent(script, { args: ["--max-rounds", "3"] });
  equal(run.code, 0, run.stderr);
  const [completion] = records(parent.entries, "completion");
  equal(completion.status, "failed");
  match(String(completion.error), /Stopped after 3 rounds/);
  equal(requests.filter(isChild).length, 3);
});
