/**
 * A line past `MAX_LINE_BYTES` (64 MiB) is skipped by every reader, and the entries written under
 * it lose their path to everything before. A model's answers are capped per answer, but a
 * compaction's checkpoint carries the newest record of each plan step, each holding its answer:
 * a hostile model answering each of a few steps with megabytes (escaped six bytes a character
 * outside ASCII) made the compaction's line unreadable, and the resume forgot the whole
 * conversation and the plan. tern never writes such a line.
 */
import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { EntryTooLongError } from "../../src/session/errors.ts";
import { latestPlan } from "../../src/plan/record.ts";
import { loadSession } from "../../src/session/load.ts";
import { Session } from "../../src/session/session.ts";
import { tempWorkspace } from "../support/tern_process.ts";

Deno.test("Session.append() writes a compaction without plan records too long for a line", async () => {
  const ws = await tempWorkspace();
  try {
    const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    session.append({ type: "message", message: { role: "user", content: "do the plan" } });
    const nodes = ["a", "b", "c"].map((id) => ({
      id,
      title: id,
      task: `step ${id}`,
      dependsOn: [],
    }));
    session.append({
      type: "plan",
      data: { kind: "plan", plan: { id: "p1", task: "the plan", nodes, runs: {} } },
    });
    // Each answer 24 MiB as the file writes it: three pass the 64 MiB a line may hold.
    const answer = "é".repeat(4 * 1024 * 1024);
    for (const node of nodes) {
      session.append({
        type: "plan",
        data: {
          kind: "node",
          planId: "p1",
          nodeId: node.id,
          run: { state: "SUCCEEDED", result: answer },
        },
      });
    }
    const kept = session.append({ type: "message", message: { role: "user", content: "next" } });
    session.append({
      type: "compaction",
      summary: "SUMMARY of the plan",
      firstKeptId: kept.id,
      tokensBefore: 100,
      tokensAfter: 10,
      fallback: false,
    });
    session.append({ type: "message", message: { role: "assistant", content: "after" } });
    session.close();
    const loaded = await loadSession(session.path);
    deepEqual(loaded.warnings, []);
    const resumed = await Session.open(session.path);
    try {
      const texts = resumed.state().items.map((item) => item.message.content);
      ok(texts[0].includes("SUMMARY of the plan"), texts[0].slice(0, 200));
      deepEqual(texts.slice(1), ["next", "after"]);
      const plan = latestPlan(resumed);
      equal(plan?.id, "p1");
      deepEqual(nodes.map((node) => plan?.runs[node.id]?.result?.length), [
        answer.length,
        answer.length,
        answer.length,
      ]);
    } finally {
      resumed.close();
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("Session.append() refuses an entry whose line would be too long, writing nothing", async () => {
  const ws = await tempWorkspace();
  try {
    const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    const first = session.append({
      type: "message",
      message: { role: "user", content: "hello" },
    });
    const size = Deno.statSync(session.path).size;
    throws(
      () =>
        session.append({
          type: "message",
          message: { role: "assistant", content: "é".repeat(12 * 1024 * 1024) },
        }),
      (error: Error) =>
        error instanceof EntryTooLongError && /more than the 67108864/.test(error.message),
    );
    equal(Deno.statSync(session.path).size, size);
    equal(session.leafId, first.id);
    session.append({ type: "message", message: { role: "assistant", content: "short" } });
    session.close();
    const loaded = await loadSession(session.path);
    deepEqual(loaded.warnings, []);
    deepEqual(loaded.entries.map((entry) => entry.parentId), [null, first.id]);
  } finally {
    await ws.cleanup();
  }
});
