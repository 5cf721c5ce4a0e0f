/**
 * The code index's size bounds: a window without words is not a chunk, one file makes at most
 * INDEX_FILE_MAX_CHUNKS chunks (the rest noted as cut), and one index holds at most its
 * `maxChunks`, past which files are not stored and the run says so. 48 MiB of blank lines once
 * made a 1.6 GB index.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { chunkFile, INDEX_FILE_MAX_CHUNKS, windowedFile } from "../../src/index/chunker.ts";
import { indexWorkspace } from "../../src/harness/code_index.ts";
import { LiveCodeIndex } from "../../src/harness/code_index_live.ts";
import { IndexStore } from "../../src/index/store.ts";
import { GITIGNORE_LIMITS } from "../../src/tools/ignore_rules.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { withWorkspace } from "./_workspace.ts";

Deno.test("windowedFile() makes no chunk of a window without words", () => {
  const blank = windowedFile({ path: "blank.txt", text: "\n".repeat(100_000), hash: "h" });
  deepEqual(blank.chunks, []);
  const punctuation = windowedFile({ path: "p.txt", text: "};\n".repeat(5_000), hash: "h" });
  deepEqual(punctuation.chunks, []);
  // Words among blank lines: only the windows that hold them.
  const lines = Array.from({ length: 1_000 }, (_, index) => index === 500 ? "needle" : "");
  const sparse = windowedFile({ path: "s.txt", text: lines.join("\n"), hash: "h" });
  ok(sparse.chunks.length >= 1 && sparse.chunks.length <= 2, `${sparse.chunks.length} windows`);
  ok(sparse.chunks.every((chunk) => chunk.text.includes("needle")));
});

Deno.test("windowedFile() keeps at most INDEX_FILE_MAX_CHUNKS windows and says where it cut", () => {
  const text = "a\n".repeat(500_000);
  const chunked = windowedFile({ path: "many.txt", text, hash: "h" });
  equal(chunked.chunks.length, INDEX_FILE_MAX_CHUNKS);
  equal(chunked.cutAtLine, INDEX_FILE_MAX_CHUNKS * 50 + 1);
  const small = windowedFile({ path: "few.txt", text: "a\n".repeat(100), hash: "h" });
  equal(small.cutAtLine, undefined);
});

Deno.test("chunkFile() keeps at most INDEX_FILE_MAX_CHUNKS chunks of parsed source", async () => {
  const text = Array.from(
    { length: INDEX_FILE_MAX_CHUNKS + 500 },
    (_, index) => `function f${index}() { return f${index + 1}(); }`,
  ).join("\n");
  const chunked = await chunkFile("many.ts", text);
  equal(chunked.chunks.length, INDEX_FILE_MAX_CHUNKS);
  ok(chunked.cutAtLine !== undefined && chunked.cutAtLine > 1);
  const ids = new Set(chunked.chunks.map((chunk) => chunk.id));
  ok(chunked.relations.every((relation) => ids.has(relation.from)));
});

Deno.test("indexWorkspace() stores no chunk for blank files and notes a file cut short", async () => {
  const files = {
    "blank1.txt": "\n".repeat(200_000),
    "blank2.md": " \n\t\n".repeat(50_000),
    "long.txt": "a\n".repeat(200_000),
  };
  await withWorkspace(files, async (workspace, home) => {
    const file = join(home, "index.sqlite");
    const summary = await indexWorkspace(workspace, file, { threads: 0 });
    equal(summary.chunks, INDEX_FILE_MAX_CHUNKS);
    deepEqual(summary.cutFiles, [{ path: "long.txt", atLine: INDEX_FILE_MAX_CHUNKS * 50 + 1 }]);
  });
});

Deno.test("indexWorkspace() stops storing files past maxChunks and counts them", async () => {
  const files: Record<string, string> = {};
  for (let index = 0; index < 6; index++) {
    files[`f${index}.ts`] =
      `export function alpha${index}() {}\nexport function beta${index}() {}\n`;
  }
  await withWorkspace(files, async (workspace, home) => {
    const file = join(home, "index.sqlite");
    // Three chunks a file (FILE and two functions): 10 chunks hold three files.
    const summary = await indexWorkspace(workspace, file, { threads: 0, maxChunks: 10 });
    equal(summary.indexed, 3);
    equal(summary.full, 3);
    const { store } = IndexStore.open(file);
    try {
      equal(store.knownFiles().size, 3);
    } finally {
      store.close();
    }
    // Once space is made (a file removed, at the end of a run), the next run stores one more.
    await Deno.remove(join(workspace, "f0.ts"));
    const again = await indexWorkspace(workspace, file, { threads: 0, maxChunks: 10 });
    equal(again.removed, 1);
    const third = await indexWorkspace(workspace, file, { threads: 0, maxChunks: 10 });
    equal(third.indexed, 1);
    equal(third.full, 2);
  });
});

Deno.test("LiveCodeIndex notes a file indexed only in part", async () => {
  await withWorkspace({ "long.txt": "word\n".repeat(200_000) }, async (workspace, home) => {
    const index = new LiveCodeIndex({ workspace, file: join(home, "index.sqlite") });
    try {
      const signal = new AbortController().signal;
      const notes = await index.refresh(signal);
      ok(notes.some((note) => note.includes('"long.txt" is indexed only in part')), `${notes}`);
    } finally {
      await index.close();
    }
  });
});

Deno.test("tern index names a file it indexed only in part and a folder past the .gitignore patterns", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, "long.txt"), "word\n".repeat(200_000));
    const patterns = Array.from({ length: GITIGNORE_LIMITS.patterns }, (_, i) => `p${i}`);
    const folders = GITIGNORE_LIMITS.totalPatterns / GITIGNORE_LIMITS.patterns + 1;
    for (let i = 0; i < folders; i++) {
      await Deno.mkdir(join(ws.dir, `g${i}`));
      await Deno.writeTextFile(join(ws.dir, `g${i}`, ".gitignore"), patterns.join("\n"));
    }
    const run = await runTern(["index"], { cwd: ws.dir, env: { TERN_HOME: ws.home } });
    equal(run.code, 0, run.stderr);
    match(
      run.stderr,
      /^tern: indexed only part of "long\.txt": from line 100001 on it is left out /m,
    );
    match(run.stderr, new RegExp(`^tern: left out "g${folders - 1}": its \\.gitignore`, "m"));
  } finally {
    await ws.cleanup();
  }
});
