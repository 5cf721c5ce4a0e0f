import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import type { Message } from "../../src/core/messages.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import type { Script, ScriptedReply } from "../../src/llm/scripted.ts";
import { PlanningError } from "../../src/plan/errors.ts";
import { extractJson, planTask, replanAfterFailure } from "../../src/plan/planner.ts";
import type { PlanNode, PlanState } from "../../src/plan/types.ts";
import {
  type ScriptedServer,
  type ScriptedServerOptions,
  startScriptedServer,
} from "../support/scripted_server.ts";

const TASK = "Add a --json flag to the stats command and document it";
const CONTEXT = "Workspace: /tmp/project\nFiles: src/ README.md deno.json";

const GOOD_NODES: PlanNode[] = [
  { id: "add-flag", title: "Add --json", task: "Add --json to src/stats.ts", dependsOn: [] },
  { id: "docs", title: "Document it", task: "Document --json in README.md", dependsOn: [] },
  {
    id: "test-flag",
    title: "Test --json",
    task: "Test --json in tests/stats_test.ts",
    dependsOn: ["add-flag"],
  },
];

const USAGE = { inputTokens: 100, outputTokens: 20 };

function answer(nodes: unknown[]): ScriptedReply {
  return { text: JSON.stringify({ nodes }), usage: USAGE };
}

function node(id: string, dependsOn: string[] = []): PlanNode {
  return { id, title: `Do ${id}`, task: `Do the ${id} step`, dependsOn };
}

/** Runs `body` with a real HTTP provider talking to a scripted server on 127.0.0.1. */
async function withProvider(
  script: Script,
  body: (
    provider: ReturnType<typeof createOpenAiChatProvider>,
    server: ScriptedServer,
  ) => Promise<void>,
  options?: ScriptedServerOptions,
): Promise<void> {
  const server = await startScriptedServer(script, options);
  try {
    await body(createOpenAiChatProvider({ baseUrl: server.baseUrl, apiKey: "sk-test" }), server);
  } finally {
    await server.close();
  }
}

function lastUser(messages: Message[]): string {
  const last = messages.at(-1);
  equal(last?.role, "user");
  return last.content;
}

/** Checks that an error is a PlanningError whose message matches. */
function planningError(pattern: RegExp): (error: unknown) => boolean {
  return (error) => {
    ok(error instanceof PlanningError, `expected a PlanningError, got ${String(error)}`);
    match(error.message, pattern);
    return true;
  };
}

Deno.test("planTask() returns a valid first answer without tools in the request", async () => {
  await withProvider([answer(GOOD_NODES)], async (provider, server) => {
    const draft = await planTask({ provider, model: "plan-model", task: TASK, context: CONTEXT });
    deepEqual(draft.nodes, GOOD_NODES);
    equal(draft.attempts, 1);
    equal(draft.usage.inputTokens, 100);
    equal(draft.usage.outputTokens, 20);
    equal(server.requests.length, 1);
    const { body, modelRequest } = server.requests[0];
    equal(body.model, "plan-model");
    equal(body.tools, undefined, "the body has no tools");
    deepEqual(modelRequest.tools, []);
    equal(body.max_tokens, 4_000);
    equal(body.temperature, 0);
    const [system, user] = modelRequest.messages;
    equal(system.role, "system");
    ok(system.content.includes('{"nodes":[{"id":"...","title":"...","task":"...","dependsOn"'));
    equal(user.role, "user");
    ok(user.content.includes(TASK), user.content);
    ok(user.content.includes(CONTEXT), user.content);
  });
});

Deno.test("planTask() reads the plan from a fenced json block among prose", async () => {
  const text = `Here is the plan:\n\n\`\`\`json\n${
    JSON.stringify({ nodes: GOOD_NODES }, null, 2)
  }\n\`\`\`\n\nEach node is small.`;
  await withProvider([{ text }], async (provider, server) => {
    const draft = await planTask({ provider, model: "m", task: TASK, maxTokens: 900 });
    deepEqual(draft.nodes, GOOD_NODES);
    equal(draft.attempts, 1);
    equal(server.requests[0].body.max_tokens, 900);
    equal(server.requests[0].modelRequest.messages[1].content.includes("workspace"), false);
  });
});

/** A first answer the planner must reject, and what the corrective message must say. */
const REJECTIONS: { claim: string; first: ScriptedReply; problem: string }[] = [
  {
    claim: "a cycle, with its path",
    first: answer([node("a", ["c"]), node("b", ["a"]), node("c", ["b"])]),
    problem: "cycle: a → c → b → a",
  },
  {
    claim: "an unknown dependency",
    first: answer([node("a"), node("b", ["lint"])]),
    problem: '"b" depends on unknown "lint"',
  },
  {
    claim: "a duplicate id",
    first: answer([node("a"), node("b"), node("a")]),
    problem: 'duplicate id "a"',
  },
  {
    claim: "a self-dependency",
    first: answer([node("a", ["a"])]),
    problem: '"a" depends on itself',
  },
  {
    claim: "an answer that is not JSON",
    first: { text: "I would start by reading the stats command,\nthen add the flag." },
    problem:
      'the answer is not JSON: "I would start by reading the stats command, then add the flag."',
  },
  {
    claim: "a node without a task",
    first: answer([{ id: "a", title: "A", dependsOn: [] }]),
    problem: 'node 1 ("a"): "task" must be a non-empty string',
  },
];

for (const { claim, first, problem } of REJECTIONS) {
  Deno.test(`planTask() retries once after ${claim}`, async () => {
    await withProvider([first, answer(GOOD_NODES)], async (provider, server) => {
      const draft = await planTask({ provider, model: "m", task: TASK });
      deepEqual(draft.nodes, GOOD_NODES);
      equal(draft.attempts, 2);
      equal(server.requests.length, 2);
      const [firstRequest, retry] = server.requests.map((r) => r.modelRequest);
      deepEqual(retry.messages.slice(0, 2), firstRequest.messages);
      deepEqual(retry.messages[2], { role: "assistant", content: first.text });
      const correction = lastUser(retry.messages);
      ok(correction.includes(problem), correction);
      match(
        correction,
        /^Your plan was rejected: .*\. Answer again with the corrected JSON only\.$/s,
      );
      deepEqual(retry.tools, []);
    });
  });
}

Deno.test("planTask() sums the usage of both requests", async () => {
  const script = [answer([node("a", ["x"])]), answer(GOOD_NODES)];
  await withProvider(script, async (provider) => {
    const { usage } = await planTask({ provider, model: "m", task: TASK });
    equal(usage.inputTokens, 200);
    equal(usage.outputTokens, 40);
  });
});

Deno.test("planTask() fails with the second answer's problems after two bad answers", async () => {
  const script = [answer([node("a", ["x"])]), answer([node("a", ["b"]), node("b", ["a"])])];
  await withProvider(script, async (provider, server) => {
    const error = await planTask({ provider, model: "m", task: TASK }).catch((e) => e);
    ok(error instanceof PlanningError, String(error));
    deepEqual(error.problems, ["cycle: a → b → a"]);
    equal(
      error.message,
      "Cannot plan the task: the model's answer was rejected twice: cycle: a → b → a",
    );
    equal(exitCodeForError(error), 1);
    equal(error.usage.inputTokens, 200);
    equal(server.requests.length, 2, "exactly one retry");
  });
});

Deno.test("planTask() fails clearly when the model API keeps failing", async () => {
  await withProvider([{ fault: "http500" }, { fault: "http500" }], async (provider, server) => {
    const error = await planTask({ provider, model: "m", task: TASK }).catch((e) => e);
    ok(error instanceof PlanningError, String(error));
    match(error.message, /^Cannot plan the task: the model call failed: HTTP 500 from model API/);
    deepEqual(error.problems, []);
    equal(server.requests.length, 1, "a failed call is not a rejected answer");
  });
});

Deno.test("planTask() fails clearly when the stream is cut off", async () => {
  const script = [{
    text: JSON.stringify({ nodes: GOOD_NODES }),
    fault: "drop_mid_stream" as const,
  }];
  await withProvider(script, async (provider) => {
    await rejects(
      planTask({ provider, model: "m", task: TASK }),
      planningError(/^Cannot plan the task: the model call failed: Model API stream ended early/),
    );
  });
});

Deno.test("planTask() stops with exit code 130 when its signal fires", async () => {
  const controller = new AbortController();
  await withProvider([{ fault: "hang" }], async (provider) => {
    const error = await planTask({ provider, model: "m", task: TASK, signal: controller.signal })
      .catch((e) => e);
    ok(error instanceof PlanningError, String(error));
    equal(error.message, "Cannot plan the task: cancelled");
    equal(exitCodeForError(error), 130);
  }, { onRequest: () => controller.abort() });
});

const STATE: PlanState = {
  id: "plan-1",
  task: TASK,
  nodes: [
    node("read-stats"),
    node("add-flag", ["read-stats"]),
    node("test-flag", ["add-flag"]),
    node("docs"),
  ],
  runs: {
    "read-stats": { state: "SUCCEEDED", result: "stats lives in src/cli/stats.ts" },
    "add-flag": { state: "FAILED", error: "deno check failed: TS2304 Cannot find name 'json'" },
    "test-flag": {
      state: "BLOCKED",
      blockedBy: ["add-flag"],
      error: 'dependency "add-flag" failed',
    },
    "docs": { state: "RUNNING" },
  },
};

const FAILED = { node: STATE.nodes[1], error: STATE.runs["add-flag"].error! };

Deno.test("replanAfterFailure() returns new nodes depending on a succeeded node", async () => {
  const added = [node("add-flag-2", ["read-stats"]), node("test-flag-2", ["add-flag-2"])];
  await withProvider([answer(added)], async (provider, server) => {
    const nodes = await replanAfterFailure({
      provider,
      model: "m",
      state: STATE,
      failed: FAILED,
      context: CONTEXT,
    });
    deepEqual(nodes, added);
    equal(server.requests.length, 1);
    const { modelRequest } = server.requests[0];
    deepEqual(modelRequest.tools, []);
    const request = lastUser(modelRequest.messages);
    for (
      const part of [
        TASK,
        CONTEXT,
        "- read-stats [SUCCEEDED]",
        "result: stats lives in src/cli/stats.ts",
        "- test-flag [BLOCKED]",
        `Node "add-flag" failed: ${FAILED.error}`,
      ]
    ) ok(request.includes(part), `missing ${JSON.stringify(part)} in:\n${request}`);
  });
});

Deno.test("replanAfterFailure() retries once when the answer reuses an existing id", async () => {
  const script = [answer([node("add-flag", ["read-stats"])]), answer([node("fix-flag")])];
  await withProvider(script, async (provider, server) => {
    const nodes = await replanAfterFailure({ provider, model: "m", state: STATE, failed: FAILED });
    deepEqual(nodes, [node("fix-flag")]);
    equal(server.requests.length, 2);
    const correction = lastUser(server.requests[1].modelRequest.messages);
    ok(correction.includes('duplicate id "add-flag"'), correction);
  });
});

Deno.test("replanAfterFailure() rejects new nodes that depend on a failed node", async () => {
  const bad = answer([node("after", ["test-flag"])]);
  await withProvider([bad, bad], async (provider) => {
    const error = await replanAfterFailure({ provider, model: "m", state: STATE, failed: FAILED })
      .catch((e) => e);
    ok(error instanceof PlanningError, String(error));
    deepEqual(error.problems, [
      '"after" depends on "test-flag", which is BLOCKED and never runs again',
    ]);
    match(error.message, /^Cannot replan after node "add-flag" failed: /);
  });
});

Deno.test("replanAfterFailure() returns [] when the model says nothing can be done", async () => {
  await withProvider([answer([])], async (provider, server) => {
    deepEqual(await replanAfterFailure({ provider, model: "m", state: STATE, failed: FAILED }), []);
    equal(server.requests.length, 1);
  });
});

Deno.test("replanAfterFailure() fails clearly on an HTTP 500", async () => {
  await withProvider([{ fault: "http500" }], async (provider) => {
    await rejects(
      replanAfterFailure({ provider, model: "m", state: STATE, failed: FAILED }),
      planningError(/^Cannot replan after node "add-flag" failed: the model call failed: HTTP 500/),
    );
  });
});

Deno.test("extractJson() takes the whole text, a fence, or the outermost braces", () => {
  deepEqual(extractJson(' {"nodes":[]} '), { value: { nodes: [] } });
  deepEqual(extractJson('Plan:\n```\n{"nodes":[1]}\n```'), { value: { nodes: [1] } });
  deepEqual(
    extractJson('```text\nnot json\n```\n```json\n{"nodes":[2]}\n```'),
    { value: { nodes: [2] } },
  );
  deepEqual(extractJson('Sure! {"nodes":[{"a":{}}]} Hope it helps'), {
    value: { nodes: [{ a: {} }] },
  });
  deepEqual(extractJson("   "), { problem: "the answer is empty" });
  const long = extractJson("x".repeat(200));
  ok("problem" in long);
  equal(long.problem, `the answer is not JSON: "${"x".repeat(120)}…"`);
});

Deno.test("replanAfterFailure() retries once when the answer would make the plan over 50 nodes", async () => {
  const many = Array.from({ length: 120 }, (_, index) => node(`more-${index}`, ["read-stats"]));
  const script = [answer(many), answer([node("fix-flag", ["read-stats"])])];
  await withProvider(script, async (provider, server) => {
    const nodes = await replanAfterFailure({ provider, model: "m", state: STATE, failed: FAILED });
    deepEqual(nodes, [node("fix-flag", ["read-stats"])]);
    equal(server.requests.length, 2);
    const correction = lastUser(server.requests[1].modelRequest.messages);
    ok(correction.includes("adding 120 nodes to 4 makes 124: a plan has at most 50"), correction);
  });
  await withProvider([answer(many), answer(many)], async (provider) => {
    await rejects(
      replanAfterFailure({ provider, model: "m", state: STATE, failed: FAILED }),
      planningError(/rejected twice: adding 120 nodes to 4 makes 124: a plan has at most 50/),
    );
  });
});
