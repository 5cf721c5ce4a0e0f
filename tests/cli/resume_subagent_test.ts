/**
 * A subagent's session holds what its parent allowed for that one run: `tern run --resume` and
 * `tern sessions compact` refuse it (as `tern run -c` never picks it), naming the parent and the
 * fork that keeps its conversation. The real `tern` on a session the real writer made.
 */
import { equal, match, ok } from "node:assert/strict";
import { Session } from "../../src/session/session.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern run --resume refuses a subagent's session, naming its parent", async () => {
  const ws = await tempWorkspace();
  try {
    const parent = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    const child = Session.create(ws.home, {
      cwd: ws.dir,
      ternVersion: "test",
      subagentOf: {
        sessionId: parent.header.id,
        path: parent.path,
        agentId: "agent-1",
        runId: "run-1",
        taskName: "audit",
      },
    });
    child.append({ type: "message", message: { role: "user", content: "look around" } });
    const childId = child.header.id;
    child.close();
    parent.close();
    const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-test-x" };
    for (
      const args of [
        ["run", "--resume", childId, "go on"],
        ["sessions", "compact", childId],
      ]
    ) {
      const run = await runTern(args, { cwd: ws.dir, env });
      equal(run.code, 2, run.stderr);
      match(run.stderr, /is subagent "audit"'s, of session/);
      ok(run.stderr.includes(parent.header.id), run.stderr);
      match(run.stderr, new RegExp(`tern sessions fork ${childId}`));
    }
    // The fork it names goes on.
    const fork = await runTern(["sessions", "fork", childId], { cwd: ws.dir, env });
    equal(fork.code, 0, fork.stderr);
  } finally {
    await ws.cleanup();
  }
});
