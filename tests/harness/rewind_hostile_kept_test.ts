/**
 * A restore runs outside the commands' sandbox, allowed to write the whole workspace: what
 * commands cannot write there (what the person's deny rules hide, tern's own code) must stay
 * out of its reach too, also while a background process of the session swaps a folder for a link
 * into such a place as the restore writes. Real files, real git, the real restore process in its
 * bubblewrap view, the real rules.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import { runRestore } from "../../src/harness/rewind/restore_ops.ts";
import type { RestoreOp } from "../../src/harness/rewind/restore_ops.ts";
import type { PermissionRule } from "../../src/config/schema.ts";
import { Session } from "../../src/session/session.ts";
import { checkpointedTurn, strictCheckpoints, temp } from "../support/host_tool.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { flipperNeed, whileFlipping } from "../support/link_flipper.ts";

/** How long the race runs at most (it stops at the first leak). */
const RACE_MS = 8_000;

const bytes = (text: string) => new TextEncoder().encode(text);

testWith(
  [bwrapNeed, flipperNeed],
  "runRestore() never writes into a folder it keeps while a folder is swapped with a link to it",
  async () => {
    const ws = await temp("tern-restore-kept-race-");
    const secrets = join(ws, "secrets");
    Deno.mkdirSync(secrets);
    Deno.writeTextFileSync(join(secrets, "token"), "SECRET\n");
    Deno.mkdirSync(join(ws, "foo"));
    // Both names are the workspace's own: any command may make and swap them.
    Deno.symlinkSync("secrets", join(ws, "bar"));
    const write: RestoreOp[] = [{
      op: "write",
      path: "foo/token",
      data: bytes("PLANTED\n"),
      executable: false,
    }];
    const untouched = () =>
      Deno.readTextFileSync(join(secrets, "token")) === "SECRET\n" &&
      [...Deno.readDirSync(secrets)].length === 1;
    let runs = 0;
    await whileFlipping(ws, "foo", "bar", async () => {
      const end = Date.now() + RACE_MS;
      while (Date.now() < end && untouched()) {
        await runRestore(ws, write, { keep: [secrets] });
        runs++;
      }
    });
    ok(untouched(), `the hidden folder was written after ${runs} restores`);
    ok(runs >= 2, `only ${runs} restores ran`);
  },
);

testWith(
  [bwrapNeed],
  "applyRewind() leaves a folder the deny rules hide where a file goes back, changing nothing",
  async () => {
    const home = await temp("tern-home-");
    const ws = await temp("tern-ws-");
    const rules: PermissionRule[] = [{ action: "deny", path: "**/cache" }];
    Deno.writeTextFileSync(join(ws, "out"), "one\n");
    Deno.writeTextFileSync(join(ws, "a.txt"), "one\n");
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    try {
      const checkpoints = strictCheckpoints(session, ws, () => rules);
      // The turn made `out` a folder; the person's hidden cache is in it now, empty.
      const turn = await checkpointedTurn(session, checkpoints, () => {
        Deno.writeTextFileSync(join(ws, "a.txt"), "two\n");
        Deno.removeSync(join(ws, "out"));
        Deno.mkdirSync(join(ws, "out", "cache"), { recursive: true });
      });
      const options = { workspace: ws, scope: "files" as const, rules };
      const plan = await planRewind(session, turn, options);
      deepEqual(plan.changes.map((change) => change.path).sort(), ["a.txt", "out"]);
      await rejects(applyRewind(session, plan, options), /"out" is a folder with files in it/);
      ok(Deno.statSync(join(ws, "out", "cache")).isDirectory, "the hidden folder is gone");
      equal(Deno.readTextFileSync(join(ws, "a.txt")), "two\n", "a file changed");
    } finally {
      session.close();
    }
  },
);

testWith(
  [bwrapNeed],
  "planRewind() and runRestore() leave tern's own code in the workspace alone",
  async () => {
    const home = await temp("tern-home-");
    const ws = await temp("tern-ws-");
    // Deno's cache is tern's own code (own_code.ts): here it lies in the workspace, as when the
    // person works on tern's checkout.
    const cache = join(ws, "deno-cache");
    Deno.mkdirSync(cache);
    Deno.writeTextFileSync(join(cache, "mod.js"), "export const x = 1;\n");
    Deno.writeTextFileSync(join(ws, "a.txt"), "one\n");
    const saved = Deno.env.get("DENO_DIR");
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    try {
      const checkpoints = strictCheckpoints(session, ws);
      const turn = await checkpointedTurn(session, checkpoints, () => {
        Deno.writeTextFileSync(join(ws, "a.txt"), "two\n");
        Deno.writeTextFileSync(join(cache, "mod.js"), "export const x = 2;\n");
      });
      Deno.env.set("DENO_DIR", cache);
      const options = { workspace: ws, scope: "files" as const, rules: [] };
      const plan = await planRewind(session, turn, options);
      deepEqual(plan.changes.map((change) => change.path), ["a.txt"]);
      await applyRewind(session, plan, options);
      equal(Deno.readTextFileSync(join(ws, "a.txt")), "one\n");
      equal(Deno.readTextFileSync(join(cache, "mod.js")), "export const x = 2;\n");
      // Even when asked (a folder swapped for a link to it as the restore writes): read-only.
      const answer = await runRestore(ws, [
        { op: "write", path: "deno-cache/mod.js", data: bytes("PLANTED\n"), executable: false },
      ]);
      equal(answer.done, 0);
      match(answer.error ?? "", /Read-only/);
      equal(Deno.readTextFileSync(join(cache, "mod.js")), "export const x = 2;\n");
    } finally {
      if (saved === undefined) Deno.env.delete("DENO_DIR");
      else Deno.env.set("DENO_DIR", saved);
      session.close();
    }
  },
);
