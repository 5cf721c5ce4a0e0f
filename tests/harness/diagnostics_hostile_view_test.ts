/**
 * A warm language server reads the files an edited file imports itself, in the sandbox view it
 * started in: a file a deny rule hides that appears after it started (a folder a command, a
 * `git pull` or the person's editor made) must be hidden from it as from the next command, so
 * its content cannot come back in the diagnostics. Real `deno lsp` in a real `:workspace`
 * sandbox with the person's deny rule, and the real read guard.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { PermissionRule } from "../../src/config/schema.ts";
import { modelReadGuard } from "../../src/harness/read_guard.ts";
import { bwrapTest, withTestSandbox } from "../sandbox/_bwrap_helpers.ts";
import { diagnosticsIn } from "./_diagnostics.ts";

const RULES: PermissionRule[] = [{ action: "deny", path: "secrets/**" }];
const SECRET = "LSP-LATE-SECRET-5151";

bwrapTest(
  "EditDiagnostics never lets a warm language server read a denied file made after it started",
  async () => {
    const files = { "deno.json": "{}\n", "a.ts": "export const a = 1;\n" };
    await withTestSandbox({ name: "lsp_view", rules: RULES, files }, async (sandbox, ws) => {
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
        equal(await diagnostics.after(a), undefined);
        const [first] = await diagnostics.servers();
        // After the server started, the denied folder appears; a command looks for it.
        await Deno.mkdir(join(ws, "secrets"));
        await Deno.writeTextFile(
          join(ws, "secrets", "token.ts"),
          `export const token = "${SECRET}";\n`,
        );
        sandbox.shellTreeChanged();
        const shown = await sandbox.shell("cat secrets/token.ts", { cwd: ws });
        ok(!shown.output.includes(SECRET), "the next command does not see it");

        await Deno.writeTextFile(
          a,
          'import { token } from "./secrets/token.ts";\nconst n: "x" = token;\n',
        );
        const found = (await diagnostics.after(a)) ?? "";
        ok(!found.includes(SECRET), found);
        ok(found.includes("deno lsp"), found);
        const [now] = await diagnostics.servers();
        ok(now.pid !== first.pid, "a server in the new view answered");

        // A command ran, but the view it planned again is the same: the same server answers.
        sandbox.shellTreeChanged();
        await sandbox.shell("true", { cwd: ws });
        await Deno.writeTextFile(a, "export const a = 2;\n");
        await diagnostics.after(a);
        equal((await diagnostics.servers())[0].pid, now.pid);
      } finally {
        await diagnostics.close();
      }
    });
  },
);
