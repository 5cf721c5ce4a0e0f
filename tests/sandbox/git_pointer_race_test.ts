/**
 * A command swapping a FIFO in for a `.git` file while tern reads it (the search for nested
 * repositories runs before every command, on tern's main thread) must not make tern wait on the
 * FIFO forever. The search runs in a child process here, so a hang fails the test by a timeout
 * instead of hanging the suite.
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";

const MODULE = new URL("../../src/sandbox/protected_paths.ts", import.meta.url).href;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("gitDirsUnder() never blocks on a FIFO swapped in for a .git file as it reads it", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-pointer-race-" }));
  const swapper = new Deno.Command("bash", {
    args: [
      "-c",
      "cd sub && while :; do ln -f r t; mv -Tf t .git; ln -f f t; mv -Tf t .git; done",
    ],
    cwd: ws,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  });
  let swapping: Deno.ChildProcess | undefined;
  try {
    await Deno.mkdir(join(ws, "sub"));
    await Deno.mkdir(join(ws, "gd"));
    await Deno.writeTextFile(join(ws, "sub", "r"), "gitdir: ../gd\n");
    const fifo = await new Deno.Command("mkfifo", { args: [join(ws, "sub", "f")] }).output();
    ok(fifo.success, "mkfifo failed");
    await Deno.copyFile(join(ws, "sub", "r"), join(ws, "sub", ".git"));
    swapping = swapper.spawn();
    const script = `const { gitDirsUnder } = await import(${JSON.stringify(MODULE)});\n` +
      `let found = 0;\n` +
      `for (let i = 0; i < 3000; i++) found += (await gitDirsUnder([${
        JSON.stringify(ws)
      }])).length;\n` +
      `console.log("searched", found > 0);\n`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", "--config", CONFIG, script],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    });
    const out = await child.output();
    const text = new TextDecoder().decode(out.stdout);
    const error = new TextDecoder().decode(out.stderr);
    ok(out.success && text.includes("searched true"), `the search hung or failed: ${text}${error}`);
  } finally {
    try {
      swapping?.kill("SIGKILL");
      await swapping?.status;
    } catch {
      // Already gone.
    }
    await Deno.remove(ws, { recursive: true });
  }
});
