/**
 * Diagnostics after edits from a warm language server: `deno lsp` started in a real
 * `:workspace` sandbox (bubblewrap) at the first change of a TypeScript file of a Deno project,
 * kept for the next change, stopped with the session, never a program of the workspace's.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { EditDiagnostics } from "../../src/harness/diagnostics/edit_diagnostics.ts";
import type { DiagnosticsSettings } from "../../src/config/types.ts";
import type { SandboxRuntime } from "../../src/sandbox/runtime.ts";
import { assertNoProcessWith, bwrapTest, withTestSandbox } from "../sandbox/_bwrap_helpers.ts";
import { anyAlive, comesTrue, descendants, isAlive } from "./_processes.ts";
import { DENO_DIR, diagnosticsIn as withSandbox, SYSTEM_PATH } from "./_diagnostics.ts";
import { READ_ALL } from "../support/read_all.ts";

/** With its language servers; a loaded machine may take long: no timeout is met here. */
function diagnosticsIn(
  sandbox: SandboxRuntime,
  ws: string,
  options: { path?: string; settings?: DiagnosticsSettings } = {},
): EditDiagnostics {
  return withSandbox(sandbox, ws, {
    ...options,
    servers: true,
    settings: { timeoutMs: 600_000, ...options.settings },
  });
}

async function denoProject(ws: string): Promise<string> {
  await Deno.writeTextFile(join(ws, "deno.json"), "{}\n");
  const file = join(ws, "main.ts");
  await Deno.writeTextFile(file, 'export const n: number = 1;\nexport const s = "a";\n');
  return file;
}

bwrapTest(
  "EditDiagnostics with deno lsp shows the type error an edit brings in and its fix, from one warm server",
  async () => {
    await withTestSandbox({ name: "lsp_ts" }, async (sandbox, ws) => {
      const file = await denoProject(ws);
      const diagnostics = diagnosticsIn(sandbox, ws);
      let pid = 0;
      try {
        equal(await diagnostics.after(file), undefined, "a clean file says nothing");
        const [first, ...others] = await diagnostics.servers();
        pid = first.pid;
        equal(first?.name, "deno lsp");
        equal(others.length, 0);

        await Deno.writeTextFile(file, 'export const n: number = "one";\nexport const s = "a";\n');
        const broken = (await diagnostics.after(file)) ?? "";
        match(broken, /^Diagnostics \(deno lsp\) for "main\.ts": 1 new error/);
        match(broken, /\nmain\.ts:1:14 error: TS2322: Type 'string' is not assignable/);

        await Deno.writeTextFile(file, "export const n: number = 1;\n");
        equal(
          await diagnostics.after(file),
          'Diagnostics (deno lsp) for "main.ts": none now (the 1 reported before are gone)',
        );
        deepEqual(await diagnostics.servers(), [first], "the same server answered every edit");
        ok(isAlive(first.pid));
      } finally {
        await diagnostics.close();
      }
      deepEqual(await diagnostics.servers(), []);
      ok(pid > 0 && !isAlive(pid), "the server outlived close()");
    });
  },
);

bwrapTest(
  "EditDiagnostics with deno lsp sees what a command changed in a file it opened before",
  async () => {
    await withTestSandbox({ name: "lsp_sync" }, async (sandbox, ws) => {
      const file = await denoProject(ws);
      const other = join(ws, "other.ts");
      await Deno.writeTextFile(other, "export const o: number = 1;\n");
      const diagnostics = diagnosticsIn(sandbox, ws);
      try {
        // other.ts is opened in the server by its own edit.
        equal(await diagnostics.after(other), undefined);
        await Deno.writeTextFile(
          file,
          'import { o } from "./other.ts";\nexport const n: number = o;\n',
        );
        equal(await diagnostics.after(file), undefined);
        // A command (not write or edit) changes other.ts; then main.ts is edited.
        await Deno.writeTextFile(other, 'export const o: string = "x";\n');
        await Deno.writeTextFile(
          file,
          'import { o } from "./other.ts";\nexport const n: number = o;\n// edited\n',
        );
        match(
          (await diagnostics.after(file)) ?? "",
          /\nmain\.ts:2:14 error: TS2322: Type 'string'/,
        );
      } finally {
        await diagnostics.close();
      }
    });
  },
);

bwrapTest(
  "EditDiagnostics.check() lets a language server's late finding go to the next result, once",
  async () => {
    await withTestSandbox({ name: "lsp_late" }, async (sandbox, ws) => {
      const file = await denoProject(ws);
      const diagnostics = diagnosticsIn(sandbox, ws);
      try {
        await Deno.writeTextFile(file, 'export const n: number = "one";\n');
        // No wait at all: the server has not even started when the result goes.
        equal(
          await diagnostics.check(file, 0),
          'Diagnostics (deno lsp) for "main.ts" are still running; ' +
            "what they find comes with a later tool result",
        );
        await diagnostics.idle();
        const [late, ...more] = diagnostics.takeLate();
        match(
          late,
          /^Diagnostics \(deno lsp\) for "main\.ts": 1 new error.*TS2322.*\n\(from a check/s,
        );
        equal(more.length, 0);
        equal(diagnostics.takeLate().length, 0);
      } finally {
        await diagnostics.close();
      }
    });
  },
);

bwrapTest("EditDiagnostics never starts a language server of the workspace's", async () => {
  await withTestSandbox({ name: "lsp_hostile" }, async (sandbox, ws) => {
    const file = await denoProject(ws);
    // The repository brings its own "deno" and "env", first on PATH, relative and absolute.
    const ran = join(ws, "ran.txt");
    const bin = join(ws, "bin");
    await Deno.mkdir(bin);
    for (const name of ["deno", "env", "typescript-language-server", "node"]) {
      await Deno.writeTextFile(join(bin, name), `#!/bin/sh\necho ${name} >> ${ran}\n`, {
        mode: 0o755,
      });
    }
    const path = `.:bin:${bin}:${DENO_DIR}:${SYSTEM_PATH}`;
    const diagnostics = diagnosticsIn(sandbox, ws, { path });
    try {
      await Deno.writeTextFile(file, 'export const n: number = "one";\n');
      match((await diagnostics.after(file)) ?? "", /^Diagnostics \(deno lsp\).*TS2322/s);
      ok(!(await Deno.stat(ran).then(() => true, () => false)), "a workspace program ran");

      // Only a workspace deno on PATH: no server (and no checker) at all.
      const only = diagnosticsIn(sandbox, ws, { path: `${bin}:${SYSTEM_PATH}` });
      equal(await only.after(file), undefined);
      deepEqual(await only.servers(), []);
      ok(!(await Deno.stat(ran).then(() => true, () => false)), "a workspace program ran");
    } finally {
      await diagnostics.close();
    }
  });
});

bwrapTest(
  "EditDiagnostics says once that a language server ended, and leaves its files to the checker",
  async () => {
    await withTestSandbox({ name: "lsp_ends" }, async (sandbox, ws) => {
      const file = await denoProject(ws);
      const diagnostics = new EditDiagnostics({
        workspace: ws,
        refuse: READ_ALL,
        path: `${DENO_DIR}:${SYSTEM_PATH}`,
        settings: { timeoutMs: 600_000 },
        shell: () =>
          Promise.resolve({
            run: sandbox.shell,
            kind: sandbox.shellKind,
            // A "server" that says something on stderr and ends before answering.
            launch: (_argv, launch) =>
              sandbox.serverLaunch(["/bin/sh", "-c", "echo broken >&2; exit 3"], launch),
          }),
      });
      await Deno.writeTextFile(file, 'export const n: number = "one";\n');
      match(
        (await diagnostics.after(file)) ?? "",
        /^Diagnostics \(deno lsp\) unavailable: Cannot start "deno lsp": it ended \(exit code 3\): broken\nDiagnostics \(deno check\) for "main\.ts": 1 new error/,
      );
      deepEqual(await diagnostics.servers(), []);
      await Deno.writeTextFile(file, "export const n: number = 1;\n");
      match((await diagnostics.after(file)) ?? "", /^Diagnostics \(deno check\).*: none now/);
    });
  },
);

bwrapTest(
  "EditDiagnostics says a language server that died between edits ended; the checker takes over",
  async () => {
    await withTestSandbox({ name: "lsp_dies" }, async (sandbox, ws) => {
      const file = await denoProject(ws);
      const diagnostics = diagnosticsIn(sandbox, ws);
      try {
        equal(await diagnostics.after(file), undefined);
        const [server] = await diagnostics.servers();
        Deno.kill(-server.pid, "SIGKILL");
        ok(await comesTrue(() => !isAlive(server.pid)));
        await Deno.writeTextFile(file, 'export const n: number = "one";\n');
        match(
          (await diagnostics.after(file)) ?? "",
          /^Diagnostics \(deno lsp\) unavailable: it ended \(SIGKILL\).*\nDiagnostics \(deno check\) for "main\.ts": 1 new error/,
        );
        deepEqual(await diagnostics.servers(), []);
      } finally {
        await diagnostics.close();
      }
    });
  },
);

bwrapTest("EditDiagnostics stops a language server that does not answer in time", async () => {
  await withTestSandbox({ name: "lsp_silent" }, async (sandbox, ws) => {
    const file = await denoProject(ws);
    const token = `${Math.random()}`.slice(2);
    const diagnostics = new EditDiagnostics({
      workspace: ws,
      refuse: READ_ALL,
      path: `${DENO_DIR}:${SYSTEM_PATH}`,
      settings: { timeoutMs: 500 },
      shell: () =>
        Promise.resolve({
          run: sandbox.shell,
          kind: sandbox.shellKind,
          // A "server" that reads nothing and says nothing.
          launch: (_argv, launch) => sandbox.serverLaunch(["/bin/sleep", `3600.${token}`], launch),
        }),
    });
    match(
      (await diagnostics.after(file)) ?? "",
      /^Diagnostics \(deno lsp\) unavailable: Cannot start "deno lsp": no answer to initialize within 0\.5 s/,
    );
    deepEqual(await diagnostics.servers(), []);
    await assertNoProcessWith(token);
  });
});

bwrapTest("EditDiagnostics turned off for language servers uses the one-shot checker", async () => {
  await withTestSandbox({ name: "lsp_off" }, async (sandbox, ws) => {
    const file = await denoProject(ws);
    const diagnostics = diagnosticsIn(sandbox, ws, { settings: { languageServers: false } });
    await Deno.writeTextFile(file, 'export const n: number = "one";\n');
    match((await diagnostics.after(file)) ?? "", /^Diagnostics \(deno check\).*TS2322/s);
    deepEqual(await diagnostics.servers(), []);
  });
});

bwrapTest(
  "SandboxRuntime.serverLaunch() confines a server as a command: no writes outside, secrets hidden",
  async () => {
    await withTestSandbox({ name: "lsp_launch" }, async (sandbox, ws) => {
      const root = dirname(ws);
      const secret = join(root, ".ssh", "id_rsa");
      await Deno.mkdir(dirname(secret));
      await Deno.writeTextFile(secret, "SECRET\n");
      const script = `read -r line; echo "got=$line"; echo x > ${root}/outside.txt; ` +
        `echo "wrote=$?"; cat ${secret} 2>/dev/null; echo "read=$?"; echo y > ${ws}/in.txt`;
      const launch = await sandbox.serverLaunch(["/bin/bash", "-c", script], { cwd: ws });
      ok(launch.confined);
      const child = new Deno.Command(launch.program, {
        args: launch.args,
        cwd: launch.cwd,
        env: launch.env,
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode("hello\n"));
      await writer.close();
      const out = new TextDecoder().decode((await child.output()).stdout);
      launch.release?.();
      match(out, /^got=hello\nwrote=[1-9]\d*\nread=[1-9]\d*\n$/);
      ok(!(await Deno.stat(join(root, "outside.txt")).then(() => true, () => false)));
      equal(await Deno.readTextFile(join(ws, "in.txt")), "y\n");
    });
  },
);

/**
 * Starts _language_server_child.ts with `args`, waits for its server, sends `signal` to it and
 * fails unless the server's whole tree (the child's descendants) ends.
 */
async function serverEndsWithTern(args: string[], signal: Deno.Signal): Promise<void> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_language_server_child.ts", import.meta.url).pathname, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    said += value;
  }
  const found = /^ready (\d+) (\S+)\n/.exec(said);
  ok(found, `the child said: ${said}`);
  const [pid, root] = [Number(found[1]), found[2]];
  let tree: number[] = [];
  try {
    tree = descendants(child.pid).filter((process) => process !== child.pid);
    ok(tree.includes(pid), "the server runs below the child");
    ok(tree.length >= 2, `the server's tree: ${tree}`);
    child.kill(signal);
    await child.status;
    await reader.cancel();
    ok(await comesTrue(() => !anyAlive(tree), 20_000), `left running: ${tree.filter(isAlive)}`);
  } finally {
    // What a failing run left behind goes, so that it cannot disturb other tests.
    for (const process of tree.filter(isAlive)) {
      try {
        Deno.kill(process, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

bwrapTest("A language server does not outlive a tern that is hung up on", async () => {
  await serverEndsWithTern([], "SIGHUP");
});

Deno.test("An unconfined language server and what it started end when tern is killed by SIGKILL", async () => {
  await serverEndsWithTern(["--no-sandbox"], "SIGKILL");
});

/** typescript-language-server and a tsserver outside the workspace, on the test's PATH. */
const TSLS_DIR = (Deno.env.get("PATH") ?? "").split(":").find((dir) => {
  try {
    return Deno.statSync(join(dir, "typescript-language-server")).isFile;
  } catch {
    return false;
  }
});

Deno.test({
  name:
    "EditDiagnostics with typescript-language-server (a tsconfig.json project) shows a type error and its fix",
  ignore: TSLS_DIR === undefined,
  fn: async () => {
    await withTestSandbox({ name: "lsp_tsls" }, async (sandbox, ws) => {
      await Deno.writeTextFile(
        join(ws, "tsconfig.json"),
        '{ "compilerOptions": { "strict": true } }\n',
      );
      const file = join(ws, "main.ts");
      await Deno.writeTextFile(file, "export const n: number = 1;\n");
      // The repository's own TypeScript, which the server would load by default.
      const ran = join(ws, "ran.txt");
      const lib = join(ws, "node_modules", "typescript", "lib");
      await Deno.mkdir(lib, { recursive: true });
      await Deno.writeTextFile(
        join(ws, "node_modules", "typescript", "package.json"),
        '{ "name": "typescript", "version": "5.6.3", "main": "lib/typescript.js" }\n',
      );
      for (const name of ["tsserver.js", "typescript.js"]) {
        await Deno.writeTextFile(
          join(lib, name),
          `require("fs").appendFileSync(${JSON.stringify(ran)}, "${name}\\n");\n`,
        );
      }
      // The bound, far above what the server needs, ends the test when it hangs.
      const diagnostics = diagnosticsIn(sandbox, ws, {
        path: `${TSLS_DIR}:${SYSTEM_PATH}`,
        settings: { timeoutMs: 120_000 },
      });
      try {
        equal(await diagnostics.after(file), undefined);
        const [server] = await diagnostics.servers();
        equal(server?.name, "typescript-language-server");
        await Deno.writeTextFile(file, 'export const n: number = "one";\n');
        match(
          (await diagnostics.after(file)) ?? "",
          /^Diagnostics \(typescript-language-server\) for "main\.ts": 1 new error.*\nmain\.ts:1:14 error: TS2322: Type 'string'/s,
        );
        await Deno.writeTextFile(file, "export const n: number = 2;\n");
        match((await diagnostics.after(file)) ?? "", /: none now/);
        deepEqual(await diagnostics.servers(), [server]);
        ok(!(await Deno.stat(ran).then(() => true, () => false)), "the workspace's TypeScript ran");
      } finally {
        await diagnostics.close();
      }
    });
  },
});
