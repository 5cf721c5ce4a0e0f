/**
 * A language server is sent the text of open files by tern's own process, which reads them
 * again before every check: a file a command swapped for a link to something the model may not
 * read (a denied file, a home secret) is closed, never sent, so its content cannot come back in
 * the diagnostics of another file. Real `deno lsp` in a real `:workspace` sandbox with the
 * person's deny rule, and the real read guard.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { PermissionRule } from "../../src/config/schema.ts";
import { modelReadGuard } from "../../src/harness/read_guard.ts";
import { bwrapTest, withTestSandbox } from "../sandbox/_bwrap_helpers.ts";
import { diagnosticsIn } from "./_diagnostics.ts";

const RULES: PermissionRule[] = [{ action: "deny", path: "secrets/**" }];
const SECRET = "LSP-SECRET-4242";

bwrapTest(
  "a file swapped for a link to a denied file is never sent to the language server",
  async () => {
    const files = {
      "deno.json": "{}\n",
      // There before the sandbox opens: its view hides it from the server's own reads.
      "secrets/token.ts": `export const token = "${SECRET}";\n`,
      "a.ts": 'export const token = "plain";\n',
    };
    await withTestSandbox({ name: "lsp_guard", rules: RULES, files }, async (sandbox, ws) => {
      const a = join(ws, "a.ts");
      const diagnostics = diagnosticsIn(sandbox, ws, {
        servers: true,
        settings: { timeoutMs: 600_000 },
        refuse: await modelReadGuard({
          workspace: ws,
          ternHome: join(ws, "..", "tern-home"),
          rules: RULES,
        }),
      });
      try {
        // a.ts is opened in the server; then a command makes it a link to the denied file.
        equal(await diagnostics.after(a), undefined);
        await Deno.remove(a);
        await Deno.symlink("secrets/token.ts", a);
        const b = join(ws, "b.ts");
        await Deno.writeTextFile(b, 'import { token } from "./a.ts";\nconst n: "x" = token;\n');
        const found = (await diagnostics.after(b)) ?? "";
        ok(!found.includes(SECRET), found);
        // Checked the file itself, the link is refused too: nothing of it is read.
        ok(!((await diagnostics.after(a)) ?? "").includes(SECRET));
      } finally {
        await diagnostics.close();
      }
    });
  },
);
