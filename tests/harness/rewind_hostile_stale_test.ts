/**
 * A rewind shown, then applied later (the interactive `/rewind` waits for the person's choice,
 * an RPC client sends its `apply` when its person answers): meanwhile a file the rewind would
 * restore can change (the person's editor, a process the model left running). Applying the old
 * plan would overwrite that change unseen, and its undo would bring back the state shown, not
 * the change: the edit lost for good. The apply refuses instead, changing nothing.
 */
import { deepEqual, equal, match, rejects } from "node:assert/strict";
import { join } from "node:path";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import { Session } from "../../src/session/session.ts";
import { checkpointedTurn, strictCheckpoints, temp } from "../support/host_tool.ts";

const filesOnly = (ws: string) => ({ workspace: ws, scope: "files" as const, rules: [] });

async function turnOver(ws: string, body: () => void): Promise<{ session: Session; id: string }> {
  Deno.writeTextFileSync(join(ws, "a.txt"), "before the turn\n");
  Deno.writeTextFileSync(join(ws, "other.txt"), "other\n");
  const home = await temp("tern-stale-home-");
  const session = Session.create(home, { cwd: ws, ternVersion: "test" });
  const id = await checkpointedTurn(session, strictCheckpoints(session, ws), body);
  return { session, id };
}

Deno.test("applyRewind() refuses a plan whose files changed since it was shown, changing nothing", async () => {
  const ws = await temp("tern-stale-");
  const { session, id } = await turnOver(ws, () => {
    Deno.writeTextFileSync(join(ws, "a.txt"), "by the turn\n");
  });
  try {
    const plan = await planRewind(session, id, filesOnly(ws));
    deepEqual(plan.changes.map((change) => change.path), ["a.txt"]);
    // While the person reads the diff, their editor saves the file.
    Deno.writeTextFileSync(join(ws, "a.txt"), "the person's edit\n");
    await rejects(
      applyRewind(session, plan, filesOnly(ws)),
      (error: Error) => {
        match(error.message, /^Cannot rewind: "a\.txt" changed since the rewind was shown\b/);
        match(error.message, /Nothing was changed/);
        return true;
      },
    );
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "the person's edit\n");
    // Shown again, the change is a conflict the person decides on.
    const again = await planRewind(session, id, filesOnly(ws));
    deepEqual(again.conflicts, ["a.txt"]);
  } finally {
    session.close();
  }
});

Deno.test("applyRewind() restores a plan when only files it leaves alone changed since, and undo keeps them", async () => {
  const ws = await temp("tern-stale-other-");
  const { session, id } = await turnOver(ws, () => {
    Deno.writeTextFileSync(join(ws, "a.txt"), "by the turn\n");
  });
  try {
    const plan = await planRewind(session, id, filesOnly(ws));
    Deno.writeTextFileSync(join(ws, "other.txt"), "the person's edit\n");
    const result = await applyRewind(session, plan, filesOnly(ws));
    deepEqual(result.written, ["a.txt"]);
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "before the turn\n");
    // The undo puts back the workspace as the rewind found it, the edit made after the preview too.
    const undo = await planRewind(session, "undo", filesOnly(ws));
    deepEqual(undo.changes.map((change) => change.path), ["a.txt"]);
    await applyRewind(session, undo, filesOnly(ws));
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "by the turn\n");
    equal(Deno.readTextFileSync(join(ws, "other.txt")), "the person's edit\n");
  } finally {
    session.close();
  }
});
