/**
 * bin/tern's own programs (bash, readlink, wc, uname, deno) never come from the workspace: a PATH
 * entry there (an activated `.venv/bin`, direnv's `PATH_add bin`) is a folder sandboxed
 * commands write, so a command could leave a look-alike for the launcher to start, unconfined, at
 * the next start. Commands in the sandbox still find the venv first.
 */
import { equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { runLauncher } from "../support/launcher.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { ROOT, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

const LAUNCHER_PROGRAMS = [
  "bash",
  "readlink",
  "wc",
  "uname",
  "deno",
  "head",
  "awk",
  "git",
  "bwrap",
];

Deno.test("bin/tern starts none of its programs from a PATH folder inside the workspace", async () => {
  const server = await startScriptedServer([
    {
      toolCalls: [{
        id: "c1",
        name: "bash",
        arguments: '{"command":"echo \\"$PATH\\" > path.txt"}',
      }],
    },
    { text: "done" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  // Outside the workspace: the launcher reached through a link (so it runs `readlink`), and
  // where a look-alike started on the host would leave its mark.
  const outside = await Deno.makeTempDir({ prefix: "tern-launcher-" });
  const marker = join(outside, "planted");
  try {
    const venv = join(ws.dir, ".venv", "bin");
    await Deno.mkdir(venv, { recursive: true });
    for (const name of LAUNCHER_PROGRAMS) {
      // Marks, then does the real program's work: a run that used it would otherwise not tell.
      await Deno.writeTextFile(
        join(venv, name),
        `#!/bin/sh\necho ${name} >> '${marker}' 2>/dev/null\nexec /usr/bin/${name} "$@"\n`,
      );
      await Deno.chmod(join(venv, name), 0o755);
    }
    // A project config makes the launcher size it (`wc`).
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(join(ws.dir, ".tern", "config.jsonc"), "{}\n");
    await Deno.mkdir(join(outside, "bin"));
    await Deno.symlink(join(ROOT, "bin", "tern"), join(outside, "bin", "tern"));
    const path = `${venv}:${join(outside, "bin")}:${dirname(Deno.execPath())}:/usr/bin:/bin`;
    const env = { PATH: path, HOME: ws.home, TERN_HOME: ws.home };
    const tern = (args: string[], cwd: string) =>
      runLauncher(args, { cwd, env, launcher: join(outside, "bin", "tern") });
    const runs = [
      { args: ["--version"], cwd: ws.dir },
      // The workspace named on the command line, from another folder.
      { args: ["config", "-C", ws.dir], cwd: outside },
      { args: scriptedRunArgs(server.baseUrl, "go"), cwd: ws.dir },
    ];
    for (const { args, cwd } of runs) {
      const run = await tern(args, cwd);
      equal(run.code, 0, `${args[0]}: ${run.stderr}`);
      equal(
        await Deno.readTextFile(marker).catch(() => null),
        null,
        `${args[0]}: a look-alike ran`,
      );
    }
    // The person's PATH as it was, for commands in the sandbox.
    const seen = await Deno.readTextFile(join(ws.dir, "path.txt"));
    ok(seen.startsWith(`${venv}:`), seen);
  } finally {
    await server.close();
    await ws.cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});
