import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createGrepTool } from "../../src/tools/grep.ts";
import { call, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const grep = createGrepTool({ ripgrep: false });

Deno.test("grep() in JavaScript searches past a 600 MB file, leaving out its overlong line", async () => {
  // Read whole, such a file (a command can write one) failed every search of the workspace
  // with "buffer exceeds maximum length", the other files' matches lost.
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.txt": "needle here\n", "z.txt": "one\nneedle two\n" });
    using big = await Deno.open(join(ws, "big.log"), { write: true, create: true });
    const mib = new Uint8Array(1024 * 1024).fill(0x61);
    for (let i = 0; i < 600; i++) await big.write(mib);
    const out = succeeded(await call(grep, ws, { pattern: "needle", context: 1 }));
    equal(
      out,
      'a.txt:1:needle here\n--\nz.txt-1-one\nz.txt:2:needle two\n\n(lines over 1 MiB long are left out, in "big.log")',
    );
  });
});

Deno.test("grep() in JavaScript keeps context and line numbers across its reads of a file", async () => {
  await withSandbox(async ({ ws }) => {
    const lines = Array.from(
      { length: 30_000 },
      (_, i) => `line ${i + 1}${i === 20_000 ? " hit" : ""}`,
    );
    await writeFiles(ws, {
      "long.txt": lines.join("\r\n"),
      "bin.dat": "hit\n\0hit\n",
      "lf.txt": "a\nhit",
    });
    const out = succeeded(await call(grep, ws, { pattern: "hit\r?$", context: 2 }));
    equal(
      out,
      [
        "lf.txt-1-a",
        "lf.txt:2:hit",
        "--",
        "long.txt-19999-line 19999",
        "long.txt-20000-line 20000",
        "long.txt:20001:line 20001 hit",
        "long.txt-20002-line 20002",
        "long.txt-20003-line 20003",
      ].join("\n"),
    );
    ok(!out.includes("\0"));
  });
});
