/**
 * `tern sessions tree` indents a row two spaces for each branch point above it. A file of a few
 * megabytes whose every entry has a side entry (a branch point each) made rows whose indentation
 * grew with the file: 20,000 of them gave 800 MB of spaces, past what one string holds, and an
 * internal error. Past 32 levels a row says its depth in figures instead.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern sessions tree on a file of 20,000 branch points prints rows of bounded width", async () => {
  const ws = await tempWorkspace();
  try {
    const header = {
      type: "session",
      version: 1,
      id: "comb",
      cwd: ws.dir,
      created: "2026-01-01T00:00:00.000Z",
      ternVersion: "test",
    };
    const lines = [JSON.stringify(header)];
    let parentId: string | null = null;
    const timestamp = "2026-01-01T00:00:01.000Z";
    for (let i = 0; i < 20_000; i++) {
      const id = `e${i}`;
      for (const [entryId, content] of [[id, "on"], [`s${i}`, "side"]]) {
        lines.push(JSON.stringify({
          type: "message",
          id: entryId,
          parentId: entryId === id ? parentId : id,
          timestamp,
          message: { role: "user", content },
        }));
      }
      parentId = id;
    }
    await Deno.writeTextFile(join(ws.dir, "comb.jsonl"), lines.join("\n") + "\n");
    const run = await runTern(["sessions", "tree", "./comb.jsonl"], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home },
      signal: AbortSignal.timeout(120_000),
    });
    equal(run.code, 0, run.stderr.slice(0, 2000));
    const rows = run.stdout.trimEnd().split("\n");
    equal(rows.length, 40_000);
    ok(rows.every((row) => row.length < 120), "every row is short");
    equal(rows.at(-1)!.trim(), "(depth 19999) * s19999 user: side ← leaf");
    equal(rows[2], "  * e1 user: on", "the first levels are indented as before");
  } finally {
    await ws.cleanup();
  }
});
