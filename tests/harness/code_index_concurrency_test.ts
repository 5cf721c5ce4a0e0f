/**
 * Two real processes on one code index: one writing (an indexer holding its write transaction
 * open), one searching through the code_search tool. The search answers from what is committed,
 * says another process is updating the index, and never surfaces "database is locked".
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { outputOf, withIndexFixture } from "./_code_index_fixture.ts";

const WRITER = new URL("./_index_writer.ts", import.meta.url).pathname;

Deno.test("code_search while another process writes the index answers from the committed index with a note", async () => {
  await withIndexFixture(async ({ dir, file, search, index }) => {
    match(outputOf(await search({ query: "compute area" })), /FUNCTION computeArea/);
    const writer = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-write", "--allow-env", WRITER, file],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = writer.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      let said = "";
      while (!said.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        said += value;
      }
      equal(said, "holding\n");
      // A command added a file: this search would write it into the index.
      await Deno.writeTextFile(join(dir, "src", "late.ts"), "export function tallyLateFees() {}\n");
      index.markChanged();
      const during = await search({ query: "compute area" });
      const output = outputOf(during);
      match(
        output,
        /^Note: another tern process is updating the code index: the results may miss/m,
      );
      match(output, /FUNCTION computeArea/);
      ok(!/locked|busy/i.test(output), output);
      ok(!output.includes("tallyLateFees"), output);
    } finally {
      await writer.stdin.close();
      await reader.cancel().catch(() => {});
      equal((await writer.status).code, 0);
    }
    // The writer is gone: the next search refreshes without a note.
    const after = outputOf(await search({ query: "tally late fees" }));
    ok(!after.includes("Note:"), after);
    match(after, /FUNCTION tallyLateFees/);
  });
});
