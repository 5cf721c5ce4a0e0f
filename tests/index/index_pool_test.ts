/**
 * A full index with index workers (code_index_pool.ts, issue 22 part 6): the same index as one
 * thread makes, outcomes settled when the worker answers, and the workers gone afterwards.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { indexWorkspace } from "../../src/harness/code_index.ts";
import { IndexPool } from "../../src/harness/code_index_pool.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { indexed, withWorkspace } from "./_workspace.ts";

/** Files of several languages and kinds: more than a full run chunks before it starts workers. */
function fixture(): Record<string, string | Uint8Array> {
  const files: Record<string, string | Uint8Array> = {};
  for (let i = 0; i < 24; i++) {
    files[`src/mod${i}.ts`] = `import { helper${i} } from "./util${i}.ts";\n` +
      `/** Tallies ballots for round ${i}. */\n` +
      `export function tallyRound${i}(votes: number[]) { return helper${i}(votes); }\n` +
      `export class Counter${i} extends Base { countVotes() { return tallyRound${i}([]); } }\n`;
    files[`src/util${i}.ts`] = `export function helper${i}(x: number[]) { return x.length; }\n`;
  }
  files["tools/build.py"] =
    'def build_all(target):\n    """Builds every target."""\n    return target\n';
  files["cmd/main.go"] = "package main\n\nfunc RunServer() {}\n";
  files["notes.md"] = "# Notes\n\nHow the ballots are counted.\n";
  files["logo.png"] = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]);
  files["huge.txt"] = "tallyVotes\n".repeat(110_000);
  return files;
}

/** Everything the index holds, in a stable order (the full-text index by its vocabulary). */
function dump(file: string): Record<string, unknown[]> {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const all = (sql: string) => db.prepare(sql).all().map((row) => ({ ...row }));
    return {
      files: all("SELECT path, hash, language, base FROM files ORDER BY path"),
      chunks: all(
        `SELECT id, path, kind, symbol, start_line, end_line, signature, doc, text, parent
         FROM chunks ORDER BY id`,
      ),
      relations: all(
        `SELECT path, from_id, kind, to_id, name, target_base, target_symbol FROM relations
         ORDER BY path, from_id, kind, name, to_id`,
      ),
      vectors: all(
        "SELECT c.id, hex(e.vector) AS vector FROM chunks c JOIN embeddings e USING (seq) ORDER BY c.id",
      ),
      words: all("SELECT term, doc, cnt FROM chunks_vocab ORDER BY term"),
    };
  } finally {
    db.close();
  }
}

Deno.test("indexWorkspace() with index workers stores what one thread stores", async () => {
  await withWorkspace(fixture(), async (workspace, home) => {
    const one = await indexWorkspace(workspace, join(home, "one.sqlite"), { threads: 0 });
    // One worker beside this thread, which prepares files too while the worker is busy; two.
    const shared = await indexWorkspace(workspace, join(home, "shared.sqlite"), { threads: 1 });
    const two = await indexWorkspace(workspace, join(home, "two.sqlite"), { threads: 2 });
    deepEqual(shared, one);
    deepEqual(two, one);
    equal(one.indexed, 51);
    equal(one.binary, 1);
    equal(one.tooLarge, 1);
    const [a, b] = [dump(join(home, "one.sqlite")), dump(join(home, "two.sqlite"))];
    ok(a.chunks.length > 100 && a.relations.length > 100 && a.words.length > 50);
    deepEqual(b, a);
    deepEqual(dump(join(home, "shared.sqlite")), a);
  });
});

Deno.test("indexWorkspace() with index workers drops a file when its worker refuses it", async () => {
  await withWorkspace(fixture(), async (workspace, home) => {
    const file = join(home, "index.sqlite");
    await indexWorkspace(workspace, file, { threads: 2 });
    ok(indexed(file).includes("src/util20.ts"));
    // Every file changes, so the run reads them all again, in its workers. util20.ts gets a
    // second hard link: the main thread's lstat sees a changed file, the worker's verified
    // reader refuses it, and only then is its old entry dropped.
    for (const entry of Deno.readDirSync(join(workspace, "src"))) {
      await Deno.writeTextFile(join(workspace, "src", entry.name), "\n", { append: true });
    }
    await Deno.link(join(workspace, "src/util20.ts"), join(home, "elsewhere.ts"));
    const summary = await indexWorkspace(workspace, file, { threads: 2 });
    equal(summary.refused, 1);
    equal(summary.removed, 1);
    ok(!indexed(file).includes("src/util20.ts"));
    ok(indexed(file).includes("src/util21.ts"));
  });
});

Deno.test("IndexPool.close() rejects the requests still waiting, naming the file", async () => {
  await withWorkspace({ "a.ts": "export function alpha() {}\n" }, async (workspace) => {
    const pool = IndexPool.start(1);
    const request = {
      workspace,
      workspaceIsReal: true,
      path: "a.ts",
      absolute: join(workspace, "a.ts"),
      vectors: true,
    };
    const answered = await pool.prepare(request);
    ok("prepared" in answered && answered.prepared.chunked.chunks.length === 2);
    const waiting = pool.prepare(request);
    pool.close();
    await rejects(waiting, /^Error: Cannot index "a\.ts": the pool was closed$/);
    await rejects(pool.prepare(request), /Cannot index "a\.ts": the pool is closed/);
  });
});

Deno.test("tern index indexes a workspace with its workers under tern's own flags", async () => {
  const ws = await tempWorkspace();
  try {
    for (let i = 0; i < 30; i++) {
      await Deno.writeTextFile(join(ws.dir, `m${i}.ts`), `export function fn${i}() {}\n`);
    }
    const run = await runTern(["index"], { cwd: ws.dir, env: { TERN_HOME: ws.home } });
    equal(run.code, 0, run.stderr);
    match(
      run.stdout,
      /^30 indexed, 0 unchanged, 0 removed, 0 binary, 0 generated, 0 too large, 60 chunks in /,
    );
    const search = await runTern(["search", "--json", "fn27"], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home },
    });
    equal(search.code, 0, search.stderr);
    match(search.stdout, /"path":\s*"m27\.ts"/);
  } finally {
    await ws.cleanup();
  }
});
