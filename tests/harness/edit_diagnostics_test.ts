/**
 * Diagnostics after edits with real checkers (`deno check`, the Python syntax check, `bash -n`)
 * run in a real `:workspace` sandbox (bubblewrap), and what a hostile workspace cannot make
 * them run.
 */
import { equal, match, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { bwrapTest, withTestSandbox } from "../sandbox/_bwrap_helpers.ts";
import { diagnosticsIn, SYSTEM_PATH } from "./_diagnostics.ts";

bwrapTest(
  "EditDiagnostics.after() shows the type error an edit brings in, and says when a fix clears it",
  async () => {
    await withTestSandbox({ name: "diag_ts" }, async (sandbox, ws) => {
      await Deno.writeTextFile(join(ws, "deno.json"), "{}\n");
      const file = join(ws, "main.ts");
      await Deno.writeTextFile(file, 'export const n: number = 1;\nexport const s = "a";\n');
      // A loaded machine may take long to type-check: no timeout is met here.
      const diagnostics = diagnosticsIn(sandbox, ws, { settings: { timeoutMs: 600_000 } });
      equal(await diagnostics.after(file), undefined, "a clean file says nothing");

      await Deno.writeTextFile(file, 'export const n: number = "one";\nexport const s = "a";\n');
      const broken = await diagnostics.after(file);
      match(broken ?? "", /^Diagnostics \(deno check\) for "main\.ts": 1 new error/);
      match(broken ?? "", /\nmain\.ts:1:14 error: TS2322: Type 'string' is not assignable/);

      // The same error again is not news; an error in another file is not this file's.
      await Deno.writeTextFile(join(ws, "other.ts"), 'export const o: number = "x";\n');
      await Deno.writeTextFile(
        file,
        'import { o } from "./other.ts";\nexport const n: number = "one";\nexport { o };\n',
      );
      match((await diagnostics.after(file)) ?? "", /: nothing new \(1 reported before remain/);

      await Deno.writeTextFile(file, "export const n: number = 1;\n");
      match(
        (await diagnostics.after(file)) ?? "",
        /^Diagnostics \(deno check\) for "main\.ts": none now \(the 1 reported before are gone\)$/,
      );
    });
  },
);

bwrapTest("EditDiagnostics.after() checks Python and shell syntax, capped", async () => {
  await withTestSandbox({ name: "diag_py" }, async (sandbox, ws) => {
    const diagnostics = diagnosticsIn(sandbox, ws);
    const py = join(ws, "app.py");
    await Deno.writeTextFile(py, "def f(:\n    pass\n");
    match(
      (await diagnostics.after(py)) ?? "",
      /^Diagnostics \(python syntax\).*\napp\.py:1:7 error: /m,
    );
    // The check compiled the file: nothing of it ran, no __pycache__ was written.
    ok(!(await Deno.stat(join(ws, "__pycache__")).then(() => true, () => false)));

    const sh = join(ws, "run.sh");
    await Deno.writeTextFile(sh, "if then\nfi\n");
    match(
      (await diagnostics.after(sh)) ?? "",
      /: 1 new error;.*\nrun\.sh:1 error: syntax error near unexpected token `then'$/s,
    );

    // A file with many findings shows ten, and how many more.
    const many = join(ws, "many.txt");
    await Deno.writeTextFile(many, "x\n");
    const lines = Array.from({ length: 15 }, (_, i) => `echo "$1:${i + 1}:1: error: bad ${i}"`);
    const noisy = diagnosticsIn(sandbox, ws, {
      settings: {
        checkers: [{
          name: "noisy",
          extensions: [".txt"],
          command: `f() { ${lines.join(";")}; }; f {file}`,
        }],
      },
    });
    const text = (await noisy.after(many)) ?? "";
    match(text, /15 new errors/);
    equal(text.split("\n").filter((line) => line.startsWith("many.txt:")).length, 10);
    match(text, /… and 5 more$/);
  });
});

bwrapTest(
  "EditDiagnostics never runs a checker of the workspace's, nor one outside the sandbox",
  async () => {
    await withTestSandbox({ name: "diag_hostile" }, async (sandbox, ws) => {
      // The repository brings its own "tsc" and "python3", on PATH and behind a symlink.
      const ran = join(ws, "ran.txt");
      await Deno.mkdir(join(ws, "node_modules", ".bin"), { recursive: true });
      for (const name of ["tsc", "python3"]) {
        await Deno.writeTextFile(
          join(ws, "node_modules", ".bin", name),
          `#!/bin/sh\necho ${name} >> ${ran}\n`,
          { mode: 0o755 },
        );
      }
      const links = await Deno.makeTempDir({ dir: dirname(ws), prefix: "links" });
      await Deno.symlink(join(ws, "node_modules", ".bin", "tsc"), join(links, "tsc"));
      await Deno.writeTextFile(join(ws, "tsconfig.json"), "{}\n");
      const path = `.:node_modules/.bin:${
        join(ws, "node_modules", ".bin")
      }:${links}:${SYSTEM_PATH}`;
      const diagnostics = diagnosticsIn(sandbox, ws, { path });
      const ts = join(ws, "a.ts");
      await Deno.writeTextFile(ts, 'const x: number = "a";\n');
      equal(await diagnostics.after(ts), undefined, "no tsc outside the workspace: no check");
      const py = join(ws, "a.py");
      await Deno.writeTextFile(py, "def f(:\n");
      match((await diagnostics.after(py)) ?? "", /python syntax/, "the system's python3");
      ok(!(await Deno.stat(ran).then(() => true, () => false)), "a workspace program ran");

      // A checker runs confined: it cannot write outside the workspace.
      const outside = join(dirname(ws), "outside-marker");
      const escaping = diagnosticsIn(sandbox, ws, {
        settings: {
          checkers: [{
            name: "escape",
            extensions: [".txt"],
            command: `echo x > ${outside}; echo "{file}:1:1: error: wrote=$?"`,
          }],
        },
      });
      const txt = join(ws, "a.txt");
      await Deno.writeTextFile(txt, "x\n");
      match((await escaping.after(txt)) ?? "", /error: wrote=[1-9]/);
      ok(!(await Deno.stat(outside).then(() => true, () => false)), "the checker wrote outside");

      // One that takes too long is stopped, said once, and not run again this session (a FIFO
      // the file imports would make every later edit wait the whole limit).
      const slow = diagnosticsIn(sandbox, ws, {
        settings: {
          timeoutMs: 300,
          checkers: [{
            name: "slow",
            extensions: [".txt"],
            command: `echo ran >> ${join(ws, "slow-runs")}; sleep 30`,
          }],
        },
      });
      match(
        (await slow.after(txt)) ?? "",
        /^Diagnostics \(slow\) unavailable: it took longer than 0\.3 s, so it is not run again/,
      );
      equal(await slow.after(txt), undefined);
      equal(await Deno.readTextFile(join(ws, "slow-runs")), "ran\n");
    });
  },
);

bwrapTest(
  "EditDiagnostics.check() lets a slow check go late, and its finding comes once afterwards",
  async () => {
    await withTestSandbox({ name: "diag_late" }, async (sandbox, ws) => {
      const diagnostics = diagnosticsIn(sandbox, ws, {
        settings: {
          checkers: [{
            name: "slowish",
            extensions: [".txt"],
            command: 'sleep 0.5; echo "{file}:2:1: error: found late"',
          }],
        },
      });
      const file = join(ws, "notes.txt");
      await Deno.writeTextFile(file, "a\nb\n");
      equal(
        await diagnostics.check(file, 0),
        'Diagnostics (slowish) for "notes.txt" are still running; ' +
          "what they find comes with a later tool result",
      );
      await diagnostics.idle();
      const [late, ...more] = diagnostics.takeLate();
      match(
        late,
        /^Diagnostics \(slowish\) for "notes\.txt": 1 new error.*\nnotes\.txt:2:1 error: found late\n\(from a check/s,
      );
      equal(more.length, 0);
      equal(diagnostics.takeLate().length, 0);
      // Within the wait, the finding is the result's own (and not news a second time).
      match(
        (await diagnostics.check(file, 60_000)) ?? "",
        /nothing new \(1 reported before remain/,
      );
    });
  },
);

bwrapTest(
  "EditDiagnostics runs a checker with PATH cut to folders outside the workspace",
  async () => {
    // Outside the temp roots, which stand in for the (hidden) home folder.
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_diag_path_" }),
    );
    const ws = join(root, "ws");
    const own = join(root, "own");
    const bin = join(ws, "node_modules", ".bin");
    await Deno.mkdir(bin, { recursive: true });
    await Deno.mkdir(own);
    const ran = join(ws, "ran.txt");
    await Deno.writeTextFile(join(bin, "node"), `#!/bin/sh\necho node >> ${ran}\n`, {
      mode: 0o755,
    });
    // The person's tsc, a script whose `#!/usr/bin/env node` looks node up on PATH. It runs
    // from `/`, where tsc names a file by its path from there.
    await Deno.writeTextFile(
      join(own, "tsc"),
      "#!/usr/bin/env node\n" +
        `console.log("${ws.slice(1)}/a.ts(1,7): error TS2322: from the real tsc");\n`,
      { mode: 0o755 },
    );
    await Deno.writeTextFile(join(ws, "tsconfig.json"), "{}\n");
    await Deno.writeTextFile(join(ws, "a.ts"), "export {};\n");
    // The shell's PATH, as the person's, starts in the workspace.
    const path = `${bin}:${own}:${SYSTEM_PATH}`;
    const sandbox = await createSandbox({
      workspace: ws,
      profile: ":workspace",
      noSandbox: false,
      ternHome: join(root, "tern-home"),
      env: { PATH: path, HOME: join(root, "home") },
      home: join(root, "home"),
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "diag-path-test",
    });
    try {
      const diagnostics = diagnosticsIn(sandbox, ws, { path });
      match(
        (await diagnostics.after(join(ws, "a.ts"))) ?? "",
        /\na\.ts:1:7 error: TS2322: from the real tsc/,
      );
      ok(!(await Deno.stat(ran).then(() => true, () => false)), "the workspace's node ran");
    } finally {
      await sandbox.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);
