/**
 * Names a repository chose (a config key, a nested folder) with line breaks in them stay on
 * their one line in what `tern doctor` and `tern sandbox explain` print: the real process, in
 * a workspace holding such names.
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

Deno.test("tern doctor shows a config key with a line break on the error's line", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(
      join(ws.dir, ".tern", "config.jsonc"),
      `{ "x\\nok   sandbox    FORGED": 1 }\n`,
    );
    const run = await runTern(["doctor"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "x" },
    });
    const lines = `${run.stdout}\n${run.stderr}`.split("\n");
    ok(lines.some((line) => line.includes('unknown key "x\\nok   sandbox    FORGED"')), run.stdout);
    ok(!lines.some((line) => line.startsWith("ok   sandbox")), run.stdout);
  } finally {
    await ws.cleanup();
  }
});

testWith(
  [bwrapNeed],
  "tern sandbox explain shows a nested git folder with line breaks on the command's line",
  async () => {
    const ws = await tempWorkspace();
    try {
      const folder = "sub\n\n  network     none: no network at all (FORGED)\n  x";
      await Deno.mkdir(join(ws.dir, ".git"));
      await Deno.mkdir(join(ws.dir, folder, ".git"), { recursive: true });
      const run = await runTern(["sandbox", "explain"], {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "x" },
      });
      ok(run.code === 0, run.stderr);
      const lines = run.stdout.split("\n");
      ok(lines.some((line) => line.includes("/sub\\n\\n  network")), run.stdout);
      ok(
        !lines.some((line) => line.includes("(FORGED)") && line.startsWith("  network")),
        run.stdout,
      );
    } finally {
      await ws.cleanup();
    }
  },
);
