/**
 * Diagnostics after edits of a hostile repository's file that makes its checker report a great
 * many findings: every one of them is compared with the last check's, and told.
 */
import { match } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest, withTestSandbox } from "../sandbox/_bwrap_helpers.ts";
import { diagnosticsIn } from "./_diagnostics.ts";

/**
 * Findings the checker prints each time (within the 1,000,000 characters of output a command
 * keeps), each message alike up to a number and the file's text.
 */
const FINDINGS = 14_000;

bwrapTest(
  "EditDiagnostics.after() compares tens of thousands of findings with the last ones",
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
      match((await diagnostics.after(file)) ?? "", /: 14000 new errors;/);
      // Every finding changed: none of the last check's matches any of them. That the comparison
      // reads each of the last ones once, not once per finding, is diagnostics_fresh_test.ts's.
      await Deno.writeTextFile(file, "B");
      const note = (await diagnostics.after(file)) ?? "";
      match(note, /: 14000 new errors;[^]*\na\.x:1 error: the declaration .* names 00000B\n/);
      // And the same findings again are nothing new.
      match(
        (await diagnostics.after(file)) ?? "",
        /: nothing new \(14000 reported before remain\)/,
      );
    });
  },
);
