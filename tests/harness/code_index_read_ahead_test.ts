/**
 * The code index reads files ahead of its walk when it reads through the tool worker (each read a
 * round trip): several at once, the walk's order kept, a failed read made again.
 */
import { deepEqual, ok } from "node:assert/strict";
import { relative } from "node:path";
import { outputOf, withIndexFixture } from "./_code_index_fixture.ts";

Deno.test("LiveCodeIndex reads ahead through its read function, and reads again what failed", async () => {
  const calls: string[] = [];
  let inFlight = 0;
  let most = 0;
  let failOnce = true;
  let workspace = "";
  const read = async (path: string): Promise<string | null | undefined> => {
    calls.push(relative(workspace, path));
    inFlight++;
    most = Math.max(most, inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (failOnce && path.endsWith("report.ts")) {
        failOnce = false;
        throw new Error("the worker went away");
      }
      return await Deno.readTextFile(path);
    } finally {
      inFlight--;
    }
  };
  await withIndexFixture(async ({ dir, search }) => {
    workspace = dir;
    const found = outputOf(await search({ query: "printFloorReport total area" }));
    ok(found.includes("src/report.ts"), found);
    ok(most > 1, `at most ${most} read(s) ran at once`);
    // report.ts twice (its read ahead failed), nothing ignored or behind a link.
    deepEqual(calls.filter((path) => path === "src/report.ts").length, 2);
    ok(!calls.some((path) => path.includes("secret") || path.includes("link")), calls.join());
  }, { read: (path) => read(path) });
});
