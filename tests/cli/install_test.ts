/**
 * `./run.sh install`: the shim works from any directory, and that directory is the workspace;
 * the shell completions are installed too.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { completionScript } from "../../src/cli/completions.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { ROOT, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

Deno.test("bin/install puts a working tern shim on a PATH root, using the start directory", async () => {
  const root = await Deno.makeTempDir({ prefix: "tern-install-" });
  const ws = await tempWorkspace();
  const server = await startScriptedServer([
    {
      toolCalls: [{ id: "c0", name: "write", arguments: '{"path":"hello.txt","content":"hi\\n"}' }],
    },
    { text: "wrote it" },
  ], { chunkDelayMs: 0 });
  try {
    // The completions go under HOME: the test's own.
    const install = await new Deno.Command(join(ROOT, "bin/install"), {
      args: ["--root", root],
      env: { HOME: root, XDG_DATA_HOME: "", XDG_CONFIG_HOME: "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(install.code, 0, new TextDecoder().decode(install.stderr));
    const shim = join(root, "bin/tern");
    const shimText = await Deno.readTextFile(shim);
    ok(shimText.includes(join(ROOT, "bin/tern")) && shimText.includes("TERN_DENO_BIN="), shimText);
    // bash by an absolute path: a workspace folder on PATH may hold a look-alike; with -p, it
    // runs no BASH_ENV file and takes no functions from the environment.
    match(shimText, /exec '\/[^']*\/bash' -p '/, shimText);

    for (
      const [shell, file] of [
        ["bash", ".local/share/bash-completion/completions/tern"],
        ["zsh", ".zfunc/_tern"],
        ["fish", ".config/fish/completions/tern.fish"],
      ] as const
    ) {
      equal(await Deno.readTextFile(join(root, file)), completionScript(shell).trimEnd() + "\n");
    }

    // A bare environment: no deno on PATH, so the shim must carry its own.
    const env = { PATH: "/usr/bin:/bin", HOME: ws.home, TERN_HOME: ws.home };
    const run = (args: string[]) =>
      new Deno.Command(shim, {
        args,
        cwd: ws.dir,
        env,
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      })
        .output();
    const version = await run(["--version"]);
    equal(new TextDecoder().decode(version.stdout).trim().startsWith("tern "), true);
    // A relative BASH_ENV names a file of the workspace.
    const marker = join(ws.home, "planted");
    await Deno.writeTextFile(join(ws.dir, ".bashenv"), `echo ran >> '${marker}'\n`);
    const withBashEnv = await new Deno.Command(shim, {
      args: ["--version"],
      cwd: ws.dir,
      env: { ...env, BASH_ENV: ".bashenv" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(withBashEnv.code, 0, new TextDecoder().decode(withBashEnv.stderr));
    equal(await Deno.readTextFile(marker).catch(() => null), null, "BASH_ENV's file ran");
    const task = await run(scriptedRunArgs(server.baseUrl, "write hello", false));
    equal(task.code, 0, new TextDecoder().decode(task.stderr));
    equal(await Deno.readTextFile(join(ws.dir, "hello.txt")), "hi\n");
  } finally {
    await server.close();
    await ws.cleanup();
    await Deno.remove(root, { recursive: true });
  }
});
