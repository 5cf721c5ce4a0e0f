/**
 * A finding can quote the checked file (a type error names a string's literal type), and the
 * file's keys were masked where the model read it: diagnostics masks them in what they say,
 * from the one-shot checker as from a language server.
 */
import { match, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest, withTestSandbox } from "../sandbox/_bwrap_helpers.ts";
import { diagnosticsIn } from "./_diagnostics.ts";

/** A key in a format the masker knows (not a real one). */
const KEY = "sk-ant-api03-Zq8XvB2nLw5TkR7yHc4JpM9sDf3GaE6uVb1NoWi0";

for (const servers of [false, true]) {
  bwrapTest(
    `EditDiagnostics masks a key a finding quotes from the file (${
      servers ? "deno lsp" : "deno check"
    })`,
    async () => {
      await withTestSandbox({ name: "diag_secret" }, async (sandbox, ws) => {
        await Deno.writeTextFile(join(ws, "deno.json"), "{}\n");
        const file = join(ws, "main.ts");
        await Deno.writeTextFile(file, `export const key: "none" = "${KEY}";\n`);
        const diagnostics = diagnosticsIn(sandbox, ws, {
          servers,
          settings: { timeoutMs: 600_000 },
        });
        try {
          const note = (await diagnostics.after(file)) ?? "";
          match(note, /TS2322/);
          ok(!note.includes(KEY.slice(0, 24)), note);
        } finally {
          await diagnostics.close();
        }
      });
    },
  );
}

bwrapTest(
  "EditDiagnostics masks a key a finding's cut would leave too short to look like one",
  async () => {
    await withTestSandbox({ name: "diag_secret_cut" }, async (sandbox, ws) => {
      await Deno.writeTextFile(join(ws, "deno.json"), "{}\n");
      const file = join(ws, "main.ts");
      // The key begins a few characters before the shown line's end (300 characters).
      const pad = `${"x".repeat(247)} `;
      await Deno.writeTextFile(file, `export const key: "none" = "${pad}${KEY}";\n`);
      const diagnostics = diagnosticsIn(sandbox, ws, { settings: { timeoutMs: 600_000 } });
      const note = (await diagnostics.after(file)) ?? "";
      match(note, /TS2322/);
      ok(!note.includes("sk-ant-api03-Zq8"), note);
    });
  },
);
