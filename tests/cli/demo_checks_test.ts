import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { checkTimeline } from "../../src/cli/demo_plan.ts";
import { checkKept } from "../../src/cli/demo_kept.ts";
import { PLAN_NODES } from "../../src/cli/demo_script.ts";
import type { PlanState } from "../../src/plan/types.ts";
import { Session } from "../../src/session/session.ts";

const succeeded: PlanState = {
  id: "p1",
  task: "t",
  nodes: PLAN_NODES,
  runs: Object.fromEntries(PLAN_NODES.map((node) => [node.id, { state: "SUCCEEDED" as const }])),
};

const changes = (...steps: string[]) =>
  steps.map((step, at) => {
    const [nodeId, state] = step.split(" ");
    return { nodeId, state, at };
  });

Deno.test("checkTimeline() passes two overlapping steps and a dependent one after both", () => {
  const { facts, problems } = checkTimeline(
    succeeded,
    changes(
      "farewell RUNNING",
      "shout RUNNING",
      "farewell SUCCEEDED",
      "shout SUCCEEDED",
      "exports RUNNING",
      "exports SUCCEEDED",
    ),
  );
  deepEqual(problems, []);
  deepEqual(facts, [
    "farewell and shout ran at once (both running for 1 ms)",
    "exports started after both had succeeded",
  ]);
});

Deno.test("checkTimeline() fails steps that ran one after the other, or a dependent that ran early", () => {
  const serial = checkTimeline(
    succeeded,
    changes(
      "farewell RUNNING",
      "farewell SUCCEEDED",
      "shout RUNNING",
      "exports RUNNING",
      "shout SUCCEEDED",
      "exports SUCCEEDED",
    ),
  );
  deepEqual(serial.problems, [
    "farewell and shout did not run at once: one ended before the other started",
    "exports started before farewell and shout had both succeeded",
  ]);
});

Deno.test("checkTimeline() fails a plan whose step failed, even if the order was right", () => {
  const failed: PlanState = {
    ...succeeded,
    runs: { ...succeeded.runs, shout: { state: "FAILED", error: "write refused" } },
  };
  const { problems } = checkTimeline(
    failed,
    changes("farewell RUNNING", "shout RUNNING", "farewell SUCCEEDED", "shout FAILED"),
  );
  ok(problems.includes('plan step "shout" FAILED: write refused'), problems.join("\n"));
  ok(problems.includes("exports did not run"), problems.join("\n"));
});

Deno.test("checkKept() finds the session by its short id; fails a file that does not parse or resumes in bypass mode", async () => {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-demo-check-" }));
  try {
    const workspace = join(home, "project");
    await Deno.mkdir(workspace);
    const session = await Session.create(join(home, "tern"), { cwd: workspace, ternVersion: "0" });
    session.append({ type: "mode", mode: "bypass" });
    session.append({ type: "message", message: { role: "user", content: "hi" } });
    session.append({ type: "mode", mode: "ask" });
    session.close();
    const where = { ternHome: join(home, "tern"), workspace, sessionPath: session.path };
    const good = await checkKept(where);
    deepEqual(good.problems, []);
    equal(good.entries, 3);
    const text = await Deno.readTextFile(session.path);
    const lines = text.trimEnd().split("\n");
    ok(lines.at(-1)!.includes('"ask"'), lines.at(-1));
    await Deno.writeTextFile(session.path, lines.slice(0, -1).join("\n") + "\n");
    deepEqual((await checkKept(where)).problems, [
      'the session would resume in mode "bypass", not "ask"',
    ]);
    await Deno.writeTextFile(session.path, text + "{not json\n");
    const bad = await checkKept(where);
    equal(bad.problems.length, 1);
    ok(bad.problems[0].includes("does not parse"), bad.problems[0]);
    await Deno.writeTextFile(session.path, text);
    const elsewhere = await checkKept({ ...where, workspace: join(home, "other") });
    ok(elsewhere.problems.length > 0, "a session of another folder is no session of the project");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
