/**
 * bin/tern's environment: a variable with a value tern cannot use stops it at once with one
 * line that names the variable and says what to do (exit code 2), never with a shell's or
 * Deno's error, and never by starting something of the workspace's.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { runLauncher } from "../support/launcher.ts";
import { tempWorkspace } from "../support/tern_process.ts";

/** bin/tern `args` in `cwd` with `env` (nothing else inherited). */
const launch = (args: string[], cwd: string, env: Record<string, string>) =>
  runLauncher(args, { cwd, env });

Deno.test("bin/tern refuses a TERN_DENO_BIN that is not an absolute executable, naming it", async () => {
  const ws = await tempWorkspace();
  const marker = join(ws.home, "planted");
  try {
    // A relative one would be the workspace's.
    await Deno.writeTextFile(join(ws.dir, "deno"), `#!/bin/sh\necho deno >> '${marker}'\n`);
    await Deno.chmod(join(ws.dir, "deno"), 0o755);
    for (const bin of ["deno", "./deno", ws.dir, join(ws.dir, "missing")]) {
      const env = { PATH: "/usr/bin:/bin", HOME: ws.home, TERN_HOME: ws.home, TERN_DENO_BIN: bin };
      const { code, stderr } = await launch(["config"], ws.dir, env);
      equal(code, 2, `${bin}: ${stderr}`);
      equal(
        stderr,
        `tern: TERN_DENO_BIN "${bin}" is not the absolute path of an executable file: set it to the path of a deno, or unset it\n`,
      );
      equal(
        await Deno.readTextFile(marker).catch(() => null),
        null,
        `${bin}: the workspace's deno ran`,
      );
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("bin/tern refuses a TMPDIR that is not an absolute folder, naming it; empty is unset", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, "a-file"), "");
    const env = {
      PATH: `${join(Deno.execPath(), "..")}:/usr/bin:/bin`,
      HOME: ws.home,
      TERN_HOME: ws.home,
    };
    // Each made tern stop with an internal error and a stack trace when it made its private tmp.
    for (const tmp of ["relative", join(ws.dir, "a-file"), join(ws.dir, "missing")]) {
      const { code, stderr } = await launch(["sandbox", "explain"], ws.dir, {
        ...env,
        TMPDIR: tmp,
      });
      equal(code, 2, `${tmp}: ${stderr}`);
      equal(
        stderr,
        `tern: TMPDIR "${tmp}" is not the absolute path of a folder: set TMPDIR to one, or unset it\n`,
      );
    }
    const empty = await launch(["sandbox", "explain"], ws.dir, { ...env, TMPDIR: "" });
    equal(empty.code, 0, empty.stderr);
  } finally {
    await ws.cleanup();
  }
});
