/**
 * A rewind stopped partway, in the harness: what planning the next rewind makes of the mix it
 * left (its own restored files and a temporary file are no conflict, a file the person changed
 * since is), and how the checkpoint log stays readable for old and new tern. Real files, real
 * git, the real store and checkpoints; the state a restore killed between a write and its
 * rename leaves is laid out by hand (tests/cli/rewind_interrupted_test.ts kills real ones).
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import {
  cliRewindCommand,
  describeInterrupted,
  interruptedRewind,
} from "../../src/harness/rewind/interrupted.ts";
import { appendRecord, readRecords, recordsPath } from "../../src/harness/rewind/records.ts";
import { checkpointedTurn, strictCheckpoints, temp } from "../support/host_tool.ts";
import { Session } from "../../src/session/session.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const FILES = ["a.txt", "b.txt", "c.txt"];

function writeAll(ws: string, version: string): void {
  for (const name of FILES) Deno.writeTextFileSync(join(ws, name), `${version}\n`);
}

function read(ws: string, name: string): string | undefined {
  try {
    return Deno.readTextFileSync(join(ws, name));
  } catch {
    return undefined;
  }
}

testWith(
  [bwrapNeed],
  "planRewind after a rewind stopped partway: its own changes are no conflict, the person's are",
  async () => {
    const home = await temp("tern-home-");
    const ws = await temp("tern-ws-");
    try {
      const session = Session.create(home, { cwd: ws, ternVersion: "test" });
      const checkpoints = strictCheckpoints(session, ws);
      await checkpointedTurn(session, checkpoints, () => writeAll(ws, "v1"));
      const second = await checkpointedTurn(session, checkpoints, () => writeAll(ws, "v2"));
      const options = { workspace: ws, scope: "files" as const, rules: [] };
      const plan = await planRewind(session, second, options);
      deepEqual(plan.changes.map((c) => c.path), FILES);
      // What applyRewind records before its restore, and what the restore, killed after its
      // first file and between the second's write and rename, leaves.
      appendRecord(session.path, {
        kind: "rewind-start",
        id: "3e0c2f1a-0000-4000-8000-000000000001",
        entryId: second,
        time: new Date().toISOString(),
        scope: "files",
        before: plan.current!,
        to: plan.to!,
        changes: plan.changes.length,
      });
      Deno.writeTextFileSync(join(ws, "a.txt"), "v1\n");
      Deno.writeTextFileSync(join(ws, ".tern-rewind-5b9d0c4e"), "v1\n");
      const records = await readRecords(session.path);
      equal(interruptedRewind(records)?.entryId, second);

      const again = await planRewind(session, second, options);
      deepEqual(again.conflicts, []);
      deepEqual(again.changes.map((c) => `${c.path} ${c.status}`).sort(), [
        ".tern-rewind-5b9d0c4e deleted",
        "b.txt modified",
        "c.txt modified",
      ]);
      // Undoing it puts back what it changed, and removes what it left.
      const undo = await planRewind(session, "undo", options);
      deepEqual(undo.conflicts, []);
      deepEqual(undo.changes.map((c) => `${c.path} ${c.status}`).sort(), [
        ".tern-rewind-5b9d0c4e deleted",
        "a.txt modified",
      ]);

      // The person changes files since: one it restored, one it did not reach, a new one.
      Deno.writeTextFileSync(join(ws, "a.txt"), "mine\n");
      Deno.writeTextFileSync(join(ws, "c.txt"), "mine\n");
      Deno.writeTextFileSync(join(ws, "d.txt"), "mine\n");
      const mine = await planRewind(session, second, options);
      deepEqual(mine.conflicts.sort(), ["a.txt", "c.txt", "d.txt"]);
      // Finishing it, keeping the person's files: the rest as the checkpoint had them.
      const result = await applyRewind(session, mine, options);
      deepEqual(result.kept.sort(), ["a.txt", "c.txt", "d.txt"]);
      equal(read(ws, "b.txt"), "v1\n");
      equal(read(ws, ".tern-rewind-5b9d0c4e"), undefined);
      equal(read(ws, "a.txt"), "mine\n");
      equal(interruptedRewind(await readRecords(session.path)), undefined);
      // The person changed files since the mix: its undo goes back to the files as they were
      // when it ran (the mix and the person's files), not further.
      const back = await planRewind(session, "undo", options);
      deepEqual(back.changes.map((c) => c.path), ["b.txt"]);
      session.close();
    } finally {
      await Deno.remove(home, { recursive: true });
      await Deno.remove(ws, { recursive: true });
    }
  },
);

Deno.test("readRecords keeps old logs readable and skips a rewind start it cannot use", async () => {
  const home = await temp("tern-home-");
  try {
    const sessionPath = join(home, "s_1.jsonl");
    const snapshot = { tree: "a".repeat(40), skipped: [] };
    const time = "2025-01-01T00:00:00.000Z";
    const lines = [
      { kind: "before", entryId: "e1", time, ...snapshot },
      { kind: "after", entryId: "e1", time, ...snapshot, changes: [] },
      // A rewind as older tern wrote it: no id, no start.
      { kind: "rewind", entryId: "e1", time, before: snapshot, after: snapshot, kept: [] },
      { kind: "rewind-start", entryId: "e1", time, id: "x", before: snapshot },
      { kind: "something-newer", entryId: "e1", time },
    ];
    Deno.writeTextFileSync(
      recordsPath(sessionPath),
      lines.map((line) => JSON.stringify(line)).join("\n") + "\n{torn",
    );
    const records = await readRecords(sessionPath);
    deepEqual(records.map((r) => r.kind), ["before", "after", "rewind"]);
    equal(interruptedRewind(records), undefined);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("describeInterrupted names the commands that finish a rewind and undo it", () => {
  const start = {
    kind: "rewind-start" as const,
    id: "i",
    entryId: "0123456789ab",
    time: "2025-01-01T00:00:00.000Z",
    scope: "files" as const,
    before: { tree: "a".repeat(40), skipped: [] },
    to: "b".repeat(40),
    changes: 3,
    conflicts: "keep" as const,
  };
  const text = describeInterrupted(start, cliRewindCommand("sess"));
  match(text, /of the 3 file\(s\) it was changing, some are still as they were/);
  ok(
    text.includes(
      "Finish it with `tern sessions rewind sess 0123456789ab --yes --restore files " +
        "--conflicts keep`",
    ),
    text,
  );
  ok(text.includes("as they were before it with `tern sessions rewind sess undo --yes`"), text);
  // An undo stopped partway is finished by undo again; there is no second way back.
  const undo = describeInterrupted(
    { ...start, entryId: "undo", scope: "both" },
    (target) => `/rewind ${target}`,
  );
  match(undo, /conversation did not move\. Finish it with `\/rewind undo`$/);
});

Deno.test("interruptedRewind() is told until a turn or a rewind changes the files", () => {
  const time = "2025-01-01T00:00:00.000Z";
  const snapshot = { tree: "a".repeat(40), skipped: [] };
  const start = (id: string) => ({
    kind: "rewind-start" as const,
    id,
    entryId: "e1",
    time,
    scope: "both" as const,
    before: snapshot,
    to: "b".repeat(40),
    changes: 1,
  });
  const rewind = (id?: string) => ({
    kind: "rewind" as const,
    ...(id === undefined ? {} : { id, before: snapshot }),
    entryId: "e1",
    time,
    kept: [],
  });
  const before = { kind: "before" as const, entryId: "e2", time, ...snapshot };
  equal(interruptedRewind([start("s1")])?.id, "s1");
  // A rewind of the conversation only (no start, no files) leaves the files as they were.
  equal(interruptedRewind([start("s1"), rewind()])?.id, "s1");
  equal(interruptedRewind([start("s1"), start("s2"), rewind("s2")]), undefined);
  equal(interruptedRewind([start("s1"), before]), undefined);
  equal(interruptedRewind([start("s1"), rewind("s1")]), undefined);
});
