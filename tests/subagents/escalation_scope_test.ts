/**
 * A child's escalated command or web call reaches the parent whole (its `rememberAs` and
 * `allowCommands` are valid protocol, not a reason to kill the child), and "allow for this
 * session" is shown with what it allows, as the parent reads it from the call itself: a child
 * cannot have the person widen its approvals by naming a narrower scope.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { REVIEWER_SYSTEM } from "../../src/agent/auto_reviewer.ts";
import { escalatedRequest } from "../../src/harness/subagents/escalation.ts";
import {
  CHILD_PROTOCOL_VERSION,
  childLineSchema,
  parseLine,
} from "../../src/harness/subagents/protocol.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ReviewRequest } from "../../src/sandbox/review.ts";
import { loadSession } from "../../src/session/load.ts";
import { listSessions } from "../../src/session/paths.ts";
import { bwrapNeed, tmuxNeed } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { dialogReady, PLACEHOLDER, send, withTern } from "../support/tmux_run.ts";
import { allText, call, firstUser, records, until } from "./_helpers.ts";

const RULES = JSON.stringify({ rules: [{ action: "ask", command: "touch" }] });
/** Loopback: the web guard refuses it after the gate, so nothing is fetched in any case. */
const PAGE = "http://127.0.0.1:9";

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
const isReviewer = (request: ModelRequest) => request.messages[0]?.content === REVIEWER_SYSTEM;

/** The child makes `calls` one after another, then reports every result it got. */
function script(calls: Array<[string, unknown]>, tools: string[]) {
  return (request: ModelRequest): ScriptedReply => {
    if (isReviewer(request)) return { text: '{"decision":"allow","reason":"fine"}' };
    if (isChild(request)) {
      const results = request.messages.filter((m) => m.role === "tool");
      const next = calls[results.length];
      if (next !== undefined) return call(next[0], next[1], `c${results.length}`);
      return {
        text: results.map((m, i) => `told ${i}: ${m.content.replace(/\n/g, " ")}`).join("\n"),
      };
    }
    if (!allText(request).includes("Started subagent")) {
      return call("spawn_agent", { task_name: "worker", message: "CHILD work", tools }, "s1");
    }
    return allText(request).includes("[subagent ") ? { text: "parent done" } : call(
      "wait_agent",
      {},
      "w1",
    );
  };
}

async function completionOf(home: string): Promise<Record<string, unknown>> {
  const parent = (await listSessions(home)).find((s) => s.subagentOf === undefined)!;
  const entries = (await loadSession(parent.path)).entries;
  await until(() => records(entries, "completion").length > 0, "the completion");
  return records(entries, "completion")[0];
}

const BASH: ReviewRequest = {
  tool: "bash",
  args: { command: "python3 -c 'print(1)'" },
  summary: "python3 -c 'print(1)'",
  command: true,
  allowCommands: ["python3 -c 'print(1)'"],
  reason: "runs a program",
  profile: ":workspace",
  rememberable: true,
  rememberAs: 'any "python3 …" command',
};

Deno.test("childLineSchema reads an escalated call with its rememberAs and allowCommands", () => {
  const line = JSON.stringify({
    type: "escalation",
    version: CHILD_PROTOCOL_VERSION,
    runId: "run-1",
    escalationId: "e1",
    request: BASH,
  });
  const parsed = parseLine(childLineSchema, line, "the child's line");
  equal(parsed.type === "escalation" && parsed.request.rememberAs, 'any "python3 …" command');
});

Deno.test("escalatedRequest() offers the session only for the scope the parent reads itself", async () => {
  const parentReads = (tool: string, args: unknown) =>
    Promise.resolve(
      tool === "bash" && (args as { command: string }).command.startsWith("python3 ")
        ? 'any "python3 …" command'
        : undefined,
    );
  const honest = await escalatedRequest("worker", BASH, parentReads);
  equal(honest.rememberable, true);
  equal(honest.rememberAs, 'any "python3 …" command from subagent "worker"');
  equal(honest.summary, "[subagent worker] python3 -c 'print(1)'");
  // The policy's reason as it is (its risk label leads it); the origin is in the note.
  equal(honest.reason, BASH.reason);
  deepEqual(honest.note, { from: 'subagent "worker"', text: "" });
  // The child's rules for a denial without a person are its own words: not passed on.
  equal(honest.allowCommands, undefined);
  // A child that names a narrower scope than its call has is offered no session answer.
  const lying = await escalatedRequest(
    "worker",
    { ...BASH, rememberAs: "any \"python3 -c 'print(1)'\" command" },
    parentReads,
  );
  deepEqual([lying.rememberable, lying.rememberAs], [false, undefined]);
  // Nor is one whose call the parent cannot read, or when the parent has no reader at all.
  const unread = await escalatedRequest("worker", BASH, () => Promise.resolve(undefined));
  equal(unread.rememberable, false);
  equal((await escalatedRequest("worker", BASH, undefined)).rememberable, false);
  const failing = await escalatedRequest("worker", BASH, () => Promise.reject(new Error("no")));
  equal(failing.rememberable, false);
});

for (
  const [what, flag, tools, first] of [
    ["command", "--auto-ask-rules", ["bash"], ["bash", { command: "touch made.txt" }]],
    ["web call", "--auto-network", ["web_fetch"], ["web_fetch", { url: `${PAGE}/a` }]],
  ] as const
) {
  Deno.test(`a child's escalated ${what} reaches a parent without a person, which denies it`, async () => {
    const server = await startScriptedServer(script([[...first]], [...tools]), {
      chunkDelayMs: 0,
    });
    const ws = await tempWorkspace();
    try {
      await Deno.writeTextFile(join(ws.home, "config.jsonc"), RULES);
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
      const args = [
        ...["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "auto"],
        ...[flag, "person", "go"],
      ];
      const run = await runTern(args, { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const completion = await completionOf(ws.home);
      // Not killed for a protocol error: the child got the parent's answer and finished.
      equal(completion.status, "completed", String(completion.error));
      match(String(completion.content), /told 0: .*POLICY_DENIED/);
      equal(await Deno.stat(join(ws.dir, "made.txt")).then(() => true, () => false), false);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  });
}

Deno.test({
  name: "an ASK parent shows what allowing a child's call for the session allows, and it holds",
  ignore: !bwrapNeed.ok || !tmuxNeed.ok,
  fn: async () => {
    const calls: Array<[string, unknown]> = [
      ["bash", { command: "touch made.txt" }],
      ["web_fetch", { url: `${PAGE}/first` }],
      // Covered by the answer "session" to the first fetch: not asked again.
      ["web_fetch", { url: `${PAGE}/second` }],
    ];
    const options = {
      server: { chunkDelayMs: 0 },
      // A second question nobody answers would deny the call soon.
      env: { TERN_SUBAGENT_ESCALATION_TIMEOUT_MS: "20000" },
      setup: (_dir: string, home: string) => Deno.writeTextFile(join(home, "config.jsonc"), RULES),
    };
    await withTern(script(calls, ["bash", "web_fetch"]), options, async ({ tern, home, dir }) => {
      await send(tern, "go");
      await tern.waitForText('subagent "worker" with "bash"');
      await dialogReady();
      await tern.keys("y");
      // The command the ask rule matches: the scope names the command's first word.
      await tern.waitForText("[subagent worker] touch made.txt");
      await tern.waitForText('[a] allows any "touch …" command from subagent "worker"');
      await dialogReady();
      await tern.keys("y");
      await tern.waitForText("[subagent worker] web_fetch GET http://127.0.0.1:9/first");
      await tern.waitForText('[a] allows any request to 127.0.0.1:9 from subagent "worker"');
      await dialogReady();
      await tern.keys("a");
      await tern.waitForText("parent done", { timeoutMs: 60_000 });
      await tern.waitForText(PLACEHOLDER);
      const completion = await completionOf(home);
      equal(completion.status, "completed", String(completion.error));
      const content = String(completion.content);
      ok(await Deno.stat(join(dir, "made.txt")).then(() => true, () => false), content);
      // Both fetches passed the gate, the second unasked; only then did the web guard refuse
      // the loopback address (a question left unanswered would have denied it: "No answer").
      match(content, /told 1: .*loopback/);
      match(content, /told 2: .*loopback/);
      ok(!/denied|No answer/.test(content), content);
    });
  },
});
