/** The headless child protocol: its schemas both ways, and the real `tern child` on its pipes. */
import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  CHILD_PROTOCOL_VERSION,
  type ChildLine,
  childLineSchema,
  type ChildRequest,
  childRequestSchema,
  parentLineSchema,
  parseLine,
} from "../../src/harness/subagents/protocol.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { loadSession } from "../../src/session/load.ts";
import { findSession } from "../../src/session/paths.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";
import { call } from "./_helpers.ts";

function request(cwd: string, baseUrl: string, prompt = "look at notes.txt"): ChildRequest {
  return {
    type: "request",
    version: CHILD_PROTOCOL_VERSION,
    taskName: "notes",
    agentId: "agent-1",
    childSessionId: crypto.randomUUID(),
    runId: "run-1",
    parentSession: { id: crypto.randomUUID(), path: "/nowhere/parent.jsonl" },
    prompt,
    goal: "read the notes",
    cwd,
    tools: { allow: [] },
    permissions: {
      profile: ":workspace",
      noSandbox: false,
      parentMode: "bypass",
      autoNetwork: "reviewer",
      autoAskRules: "reviewer",
      changes: [],
      escalationTimeoutMs: 1000,
    },
    timeoutMs: 60_000,
    model: { model: "scripted", thinking: "off", baseUrl },
  };
}

Deno.test("childRequestSchema and childLineSchema read back what they describe", () => {
  const sent = request("/work", "http://127.0.0.1:1/v1");
  deepEqual(parseLine(childRequestSchema, JSON.stringify(sent), "request"), sent);
  const final: ChildLine = {
    type: "final",
    version: CHILD_PROTOCOL_VERSION,
    taskName: "notes",
    agentId: "agent-1",
    childSessionId: sent.childSessionId,
    runId: "run-1",
    status: "completed",
    content: "done",
    finalEntryId: "abcd0123",
  };
  deepEqual(parseLine(childLineSchema, JSON.stringify(final), "line"), final);
  const answer = { type: "escalation_answer", version: 1, escalationId: "e1", answer: "deny" };
  deepEqual(parseLine(parentLineSchema, JSON.stringify(answer), "answer"), answer);
});

Deno.test("an escalation keeps that part of the call was hidden as a key (hiddenKeys)", () => {
  const line: ChildLine = {
    type: "escalation",
    version: CHILD_PROTOCOL_VERSION,
    runId: "run-1",
    escalationId: "e1",
    request: {
      tool: "bash",
      args: { command: "deploy --token [REDACTED:secret]" },
      summary: "deploy --token [REDACTED:secret]",
      command: true,
      reason: "destructive",
      hiddenKeys: true,
      profile: ":workspace",
      rememberable: false,
    },
  };
  // Before, the strict schema lacked the field: the line failed and the child's run with it.
  deepEqual(parseLine(childLineSchema, JSON.stringify(line), "line"), line);
});

Deno.test("parseLine() refuses another version, extra fields, a bad id and non-JSON", () => {
  const sent = request("/work", "http://127.0.0.1:1/v1");
  throws(
    () => parseLine(childRequestSchema, JSON.stringify({ ...sent, version: 2 }), "request"),
    /Cannot read request: .*version/,
  );
  throws(() => parseLine(childRequestSchema, JSON.stringify({ ...sent, extra: 1 }), "request"));
  throws(
    () =>
      parseLine(childRequestSchema, JSON.stringify({ ...sent, childSessionId: "../x" }), "request"),
    /childSessionId/,
  );
  throws(() => parseLine(childLineSchema, "hello", "line"), /not JSON/);
});

Deno.test("tern child writes only protocol lines on stdout: events, then one final record", async () => {
  const script = (request: ModelRequest, index: number) => {
    if (index === 0) return { text: "Reading.", ...call("read", { path: "notes.txt" }, "r1") };
    const seen = request.messages.some((m) => m.role === "tool" && m.content.includes("N-42"));
    return { text: seen ? "the note says N-42" : "no note" };
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, "notes.txt"), "N-42\n");
    const sent = request(ws.dir, server.baseUrl);
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
    const run = await runTernWithInput(
      ["child", "--base-url", server.baseUrl],
      JSON.stringify(sent) + "\n",
      { cwd: ws.dir, env },
    );
    equal(run.code, 0, run.stderr);
    const lines = run.stdout.split("\n").filter((line) => line !== "");
    // Every line is a valid protocol line; anything else on stdout fails here.
    const parsed = lines.map((line) => parseLine(childLineSchema, line, "stdout line"));
    ok(run.stdout.endsWith("\n"));
    const finals = parsed.filter((line) => line.type === "final");
    equal(finals.length, 1);
    equal(parsed.at(-1), finals[0]);
    const final = finals[0] as Extract<ChildLine, { type: "final" }>;
    equal(final.status, "completed");
    equal(final.content, "the note says N-42");
    deepEqual(
      [final.taskName, final.agentId, final.childSessionId, final.runId],
      [sent.taskName, sent.agentId, sent.childSessionId, sent.runId],
    );
    const events = parsed.filter((line) => line.type === "event").map((line) =>
      (line as { event: { type: string } }).event.type
    );
    ok(events.includes("tool_start") && events.includes("turn_end"));
    // The child's session: the chosen id, linked to the parent, with the final record.
    const path = await findSession(ws.home, sent.childSessionId, ws.dir);
    const session = await loadSession(path);
    equal(session.header.id, sent.childSessionId);
    equal(session.header.subagentOf?.sessionId, sent.parentSession.id);
    equal(final.finalEntryId, session.entries.at(-2)?.id);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("tern child refuses a bad request on stderr and writes nothing on stdout", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home };
    const run = await runTernWithInput(["child"], '{"type":"request","version":9}\n', {
      cwd: ws.dir,
      env,
    });
    equal(run.code, 2);
    equal(run.stdout, "");
    ok(run.stderr.includes("Cannot read the child request"), run.stderr);
  } finally {
    await ws.cleanup();
  }
});
