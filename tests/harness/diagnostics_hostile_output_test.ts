/**
 * Diagnostics after edits of a hostile repository's file that makes its checker report a great
 * many findings: comparing them with the last check's stays linear, so tern's own thread (which
 * runs it, beside the terminal and Ctrl-C) is not held for minutes.
 */
import { match, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest, withTestSandbox } from "../sandbox/_bwrap_helpers.ts";
import { diagnosticsIn } from "./_diagnostics.ts";

/**
 * Findings the checker prints each time (within the 1,000,000 characters of output a command
 * keeps), each message alike up to a number and the file's text.
 */
const FINDINGS = 14_000;

bwrapTest(
  "EditDiagnostics.after() compares tens of thousands of findings with the last ones in linear time",
  async () => {
    await withTestSandbox({ name: "diag_many" }, async (sandbox, ws) => {
      const file = join(ws, "a.x");
      const diagnostics = diagnosticsIn(sandbox, ws, {
        settings: {
          timeoutMs: 600_000,
          checkers: [{
            name: "many",
            extensions: [".x"],
            command: `awk -v p="$(cat {file})" 'BEGIN { for (i = 0; i < ${FINDINGS}; i++) ` +
              `printf "a.x:1: error: the declaration is not of the type it names %05d%s\\n", i, p }'`,
          }],
        },
      });
      await Deno.writeTextFile(file, "A");
      let started = performance.now();
      match((await diagnostics.after(file)) ?? "", /: 14000 new errors;/);
      const first = performance.now() - started;
      // Every finding changed: none of the last check's matches any of them.
      await Deno.writeTextFile(file, "B");
      started = performance.now();
      const note = (await diagnostics.after(file)) ?? "";
      const took = performance.now() - started;
      match(note, /: 14000 new errors;[^]*\na\.x:1 error: the declaration .* names 00000B\n/);
      // As long as the first check, whose findings met none before; comparing each finding with
      // each of the last ones took 20 s more here.
      ok(
        took < 3 * first + 2_000,
        `the checks took ${Math.round(first)} and ${Math.round(took)} ms`,
      );
    });
  },
);
