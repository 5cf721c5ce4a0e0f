/**
 * bin/tern runs programs of its own on the host (bash itself, git for checkpoints, and for the sandbox find,
 * mkdir, rmdir, setsid) with the workspace as its working folder. A relative or empty PATH entry
 * would find a repository's look-alike there and run it unconfined: bin/tern keeps only
 * absolute entries.
 */
import { equal } from "node:assert/strict";
import { dirname, join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";
import { runLauncher } from "../support/launcher.ts";

Deno.test("bin/tern never runs a repository's look-alike of a program it starts, whatever PATH holds", async () => {
  const server = await startScriptedServer([
    { toolCalls: [{ id: "c1", name: "bash", arguments: '{"command":"echo hi > hi.txt"}' }] },
    { text: "done" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const marker = join(dirname(ws.dir), `planted-${crypto.randomUUID()}`);
  try {
    for (const name of ["bash", "git", "find", "mkdir", "rmdir", "setsid", "bwrap"]) {
      const planted = join(ws.dir, name);
      await Deno.writeTextFile(planted, `#!/bin/sh\necho ${name} >> '${marker}'\nexit 1\n`);
      await Deno.chmod(planted, 0o755);
    }
    const run = await runLauncher(scriptedRunArgs(server.baseUrl, "go"), {
      cwd: ws.dir,
      env: {
        // Relative and empty entries first, as a careless shell setup might have them.
        PATH: `.::bin:${dirname(Deno.execPath())}:/usr/local/bin:/usr/bin:/bin`,
        HOME: ws.home,
        TERN_HOME: ws.home,
        TERN_DENO_BIN: Deno.execPath(),
      },
    });
    equal(run.code, 0, run.stderr);
    equal(await Deno.readTextFile(marker).catch(() => null), null, "a planted program ran");
  } finally {
    await Deno.remove(marker).catch(() => {});
    await server.close();
    await ws.cleanup();
  }
});
