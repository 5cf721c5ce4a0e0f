/**
 * The command line a checker runs: the person's checker gets the changed file's name and the
 * workspace's each quoted once, whatever the repository named the file; a built-in checker
 * runs from `/`, so a program on PATH that reads its working folder's configuration (a version
 * manager's shim: asdf's `.tool-versions` may name a program by its path) finds none of the
 * repository's.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { CheckerTable, fillCommand } from "../../src/harness/diagnostics/checkers.ts";
import { Programs } from "../../src/harness/diagnostics/programs.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { bwrapTest } from "../sandbox/_bwrap_helpers.ts";
import { diagnosticsIn, SYSTEM_PATH } from "./_diagnostics.ts";

/** The words bash makes of `line` (printed by printf, one a line). */
async function words(line: string): Promise<string[]> {
  const { stdout } = await new Deno.Command("bash", {
    args: ["-c", `printf '%s\\n' ${line}`],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(stdout).split("\n").slice(0, -1);
}

Deno.test("fillCommand() keeps a file name holding {workspace} one word, as it is", async () => {
  const workspace = "/tmp/my ws;$(touch pwned)";
  const file = `${workspace}/a{workspace}b{file}.ts`;
  const line = fillCommand("{file} {workspace}", { file, workspace });
  equal((await words(line)).join("|"), `${file}|${workspace}`);
});

Deno.test("CheckerTable gives the person's checker the file's own name, quoted once", async () => {
  const workspace = "/tmp/my ws";
  const table = new CheckerTable(workspace, new Programs(workspace, SYSTEM_PATH), [
    { name: "own", extensions: [".ts"], command: "{file}" },
  ]);
  const file = `${workspace}/x{workspace}.ts`;
  const checker = table.checkerFor(file);
  ok(checker !== undefined);
  equal((await words(checker.command(file))).join("|"), file);
});

bwrapTest(
  "EditDiagnostics runs a built-in checker from /, so a shim reads no version file of the workspace",
  async () => {
    // Outside the temp roots, which stand in for the (hidden) home folder.
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_diag_shim_" }),
    );
    const ws = join(root, "ws");
    const own = join(root, "own");
    await Deno.mkdir(ws);
    await Deno.mkdir(own);
    const ran = join(ws, "ran.txt");
    // The person's tsc is a version manager's shim: the version file of the folder it runs in
    // may name the program to run, as asdf's `path:` versions do.
    await Deno.writeTextFile(
      join(own, "tsc"),
      '#!/bin/sh\n[ -f .tool-versions ] && exec "$(cat .tool-versions)" "$@"\n' +
        'echo "$5/a.ts(1,7): error TS2322: from the person\'s tsc"\n',
      { mode: 0o755 },
    );
    await Deno.writeTextFile(join(ws, ".tool-versions"), join(ws, "evil.sh"));
    await Deno.writeTextFile(join(ws, "evil.sh"), `#!/bin/sh\necho ran >> ${ran}\n`, {
      mode: 0o755,
    });
    await Deno.writeTextFile(join(ws, "tsconfig.json"), "{}\n");
    await Deno.writeTextFile(join(ws, "a.ts"), "export {};\n");
    const path = `${own}:${SYSTEM_PATH}`;
    const sandbox = await createSandbox({
      workspace: ws,
      profile: ":workspace",
      noSandbox: false,
      ternHome: join(root, "tern-home"),
      env: { PATH: path, HOME: join(root, "home") },
      home: join(root, "home"),
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "diag-shim-test",
    });
    try {
      const diagnostics = diagnosticsIn(sandbox, ws, { path });
      match(
        (await diagnostics.after(join(ws, "a.ts"))) ?? "",
        /\na\.ts:1:7 error: TS2322: from the person's tsc/,
      );
      ok(!(await Deno.stat(ran).then(() => true, () => false)), "the workspace's program ran");
    } finally {
      await sandbox.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);

bwrapTest(
  "EditDiagnostics starts a language server from /, so a shim reads no version file of the workspace",
  async () => {
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_diag_server_shim_" }),
    );
    const ws = join(root, "ws");
    const own = join(root, "own");
    await Deno.mkdir(ws);
    await Deno.mkdir(own);
    const ran = join(ws, "ran.txt");
    // The person's deno is a version manager's shim in front of the real one.
    await Deno.writeTextFile(
      join(own, "deno"),
      '#!/bin/sh\n[ -f .tool-versions ] && exec "$(cat .tool-versions)" "$@"\n' +
        `exec ${Deno.execPath()} "$@"\n`,
      { mode: 0o755 },
    );
    await Deno.writeTextFile(join(ws, ".tool-versions"), join(ws, "evil.sh"));
    await Deno.writeTextFile(join(ws, "evil.sh"), `#!/bin/sh\necho ran >> ${ran}\n`, {
      mode: 0o755,
    });
    await Deno.writeTextFile(join(ws, "deno.json"), "{}\n");
    const file = join(ws, "main.ts");
    await Deno.writeTextFile(file, 'export const n: number = "one";\n');
    const path = `${own}:${SYSTEM_PATH}`;
    const sandbox = await createSandbox({
      workspace: ws,
      profile: ":workspace",
      noSandbox: false,
      ternHome: join(root, "tern-home"),
      env: { PATH: path, HOME: join(root, "home") },
      home: join(root, "home"),
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "diag-server-shim-test",
    });
    const diagnostics = diagnosticsIn(sandbox, ws, {
      path,
      servers: true,
      settings: { timeoutMs: 600_000 },
    });
    try {
      match((await diagnostics.after(file)) ?? "", /^Diagnostics \(deno lsp\) for "main\.ts"/);
      ok(!(await Deno.stat(ran).then(() => true, () => false)), "the workspace's program ran");
    } finally {
      await diagnostics.close();
      await sandbox.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);
