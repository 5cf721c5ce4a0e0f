/**
 * The live code index's refresh keeps its time budget whatever the walk meets: ignored entries,
 * folders and links count against the deadline too, a repository's .gitignore files cannot make
 * every walk compile millions of patterns, and a file deleted since the last whole walk is not
 * answered while walks are cut short.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { outputOf, withIndexFixture } from "./_code_index_fixture.ts";
import { LiveCodeIndex } from "../../src/harness/code_index_live.ts";

/** `count` folders before `src`, each holding a .gitignore of 10,000 patterns that ignores itself. */
async function gitignoreBomb(dir: string, count: number): Promise<void> {
  const patterns = Array.from({ length: 9_999 }, (_, index) => `pattern-${index}-*.x`);
  const text = [...patterns, ".gitignore", ""].join("\n");
  for (let index = 0; index < count; index++) {
    const folder = join(dir, `bomb${String(index).padStart(3, "0")}`);
    await Deno.mkdir(folder);
    await Deno.writeTextFile(join(folder, ".gitignore"), text);
  }
}

Deno.test("code_search finds files after a .gitignore bomb and names what it left out", async () => {
  // The cap is what is tested (without it the walk compiled a million patterns, 17 s, and left
  // nothing out): compiling the 50,000 it keeps took 5 s of the 8 s default budget on a loaded
  // machine, whose deadline would then cut the walk before src. So the budget is wide here,
  // and the time bound only a hang guard.
  await withIndexFixture(async ({ dir, search }) => {
    await gitignoreBomb(dir, 100);
    const started = performance.now();
    const output = outputOf(await search({ query: "printFloorReport" }));
    const took = performance.now() - started;
    match(output, /FUNCTION printFloorReport/);
    match(output, /it leaves out "bomb\d+"/);
    ok(took < 30_000, `the search took ${(took / 1000).toFixed(1)} s`);
  }, { budgetMs: 60_000 });
});

Deno.test("LiveCodeIndex ends its walk at the deadline among entries that never reach its queue", async () => {
  await withIndexFixture(async ({ dir, index }) => {
    // Many folders and links, nothing to index in them: none is a file for the queue.
    for (let index = 0; index < 3_000; index++) {
      await Deno.mkdir(join(dir, "aaa", `d${index}`), { recursive: true });
    }
    const signal = new AbortController().signal;
    const started = performance.now();
    const notes = await index.refresh(signal);
    const took = performance.now() - started;
    ok(took < 400, `the refresh took ${took.toFixed(0)} ms of a 20 ms budget`);
    ok(notes.some((note) => note.includes("time budget")), notes.join("\n"));
  }, { budgetMs: 20 });
});

Deno.test("LiveCodeIndex stops a walk at an abort among entries that never reach its queue", async () => {
  await withIndexFixture(async ({ dir, index }) => {
    for (let index = 0; index < 2_000; index++) {
      await Deno.mkdir(join(dir, "aaa", `d${index}`), { recursive: true });
    }
    const controller = new AbortController();
    const refreshing = index.refresh(controller.signal);
    controller.abort();
    let failed = false;
    await refreshing.catch(() => failed = true);
    ok(failed, "the refresh went on after the abort");
  });
});

Deno.test("code_search does not answer a deleted file while its walks are cut short", async () => {
  await withIndexFixture(async ({ dir, file, search }) => {
    match(outputOf(await search({ query: "printFloorReport" })), /src\/report\.ts/);
    await Deno.remove(join(dir, "src", "report.ts"));
    // A second process's index whose every walk runs out of time at once.
    const cut = new LiveCodeIndex({ workspace: dir, file, budgetMs: 0 });
    try {
      const signal = new AbortController().signal;
      const answer = await cut.search("printFloorReport", { limit: 10, signal });
      ok(answer.notes.some((note) => note.includes("time budget")), answer.notes.join("\n"));
      equal(answer.results.filter((hit) => hit.chunk.path === "src/report.ts").length, 0);
      const symbols = await cut.symbols("printFloorReport", "definitions", { limit: 10, signal });
      equal(symbols.results.length, 0);
    } finally {
      await cut.close();
    }
  });
});
