/**
 * bin/tern refuses a HOME that is not a folder (a file, a path under one, a loop of links) with
 * one line and exit code 2: Deno reads `$HOME/.npmrc` before any of tern's code runs, and would
 * otherwise end with its own backtrace. A HOME that is not there yet is left alone.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { tempWorkspace } from "../support/tern_process.ts";
import { runLauncher } from "../support/launcher.ts";

function binTern(args: string[], cwd: string, home: string) {
  return runLauncher(args, {
    cwd,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: home,
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
    },
  });
}

Deno.test("bin/tern refuses a HOME that is not a folder, saying so", async () => {
  const ws = await tempWorkspace();
  try {
    const file = join(ws.home, "file");
    await Deno.writeTextFile(file, "x");
    const loop = join(ws.home, "loop");
    await Deno.symlink(loop, loop);
    const cases: Array<[string, RegExp]> = [
      [file, /^tern: HOME ".*\/file" is not a folder: set HOME to your home folder$/m],
      [`${file}/x`, /^tern: HOME ".*\/file\/x" cannot be a folder: ".*\/file" is not a folder/m],
      [`${loop}/x`, /^tern: HOME ".*\/loop\/x" cannot be a folder: ".*\/loop" is not a folder/m],
    ];
    for (const [home, expected] of cases) {
      const run = await binTern(["config"], ws.dir, home);
      equal(run.code, 2, `${home}: ${run.stderr}`);
      match(run.stderr, expected);
      ok(!/npmrc|backtrace|Caused by/.test(run.stderr), run.stderr);
    }
    // A HOME that does not exist is most likely mistyped: tern makes no home folder.
    const missing = await binTern(["config"], ws.dir, join(ws.home, "not-yet"));
    equal(missing.code, 2, missing.stderr);
    match(missing.stderr, /HOME ".*not-yet" does not exist/);
  } finally {
    await ws.cleanup();
  }
});
