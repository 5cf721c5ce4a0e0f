/**
 * A model a project's files chose is one the person pays for: `tern run` says which model and
 * which file chose it before it starts, as it does for a server a project chose.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/**
 * A workspace whose project config chooses `pricey-model-9`, a scripted model server, and `run`:
 * `tern run --mode bypass <args> hi` against it. Cleans up after `test`.
 */
async function withProjectModel(
  test: (
    run: (args: string[]) => ReturnType<typeof runTern>,
    server: Awaited<ReturnType<typeof startScriptedServer>>,
  ) => Promise<void>,
): Promise<void> {
  const ws = await tempWorkspace();
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  try {
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(
      join(ws.dir, ".tern", "config.jsonc"),
      JSON.stringify({ model: "pricey-model-9" }),
    );
    await test(
      (args) =>
        runTern(["run", "--base-url", server.baseUrl, "--mode", "bypass", ...args, "hi"], {
          cwd: ws.dir,
          env,
          signal: AbortSignal.timeout(60_000),
        }),
      server,
    );
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

Deno.test("tern run names the model a project's file chose, and the file", async () => {
  await withProjectModel(async (run, server) => {
    const chosen = await run([]);
    equal(chosen.code, 0, chosen.stderr);
    equal(server.requests[0].body.model, "pricey-model-9");
    // Before: nothing said who chose the model.
    match(
      chosen.stderr,
      /the model is pricey-model-9, chosen by project config ".*config\.jsonc".*pass --model to choose yourself/,
    );
    const own = await run(["-m", "pricey-model-9"]);
    equal(own.code, 0, own.stderr);
    ok(!own.stderr.includes("chosen by"), own.stderr);
  });
});

Deno.test("tern run -c names no project model when the resumed session's own model answers", async () => {
  await withProjectModel(async (run, server) => {
    const first = await run(["-m", "own-model-1"]);
    equal(first.code, 0, first.stderr);
    const resumed = await run(["-c"]);
    equal(resumed.code, 0, resumed.stderr);
    equal(server.requests.at(-1)?.body.model, "own-model-1");
    // Before: "the model is pricey-model-9, chosen by …", a model this run never used.
    ok(!resumed.stderr.includes("chosen by"), resumed.stderr);
    ok(!resumed.stderr.includes("pricey-model-9"), resumed.stderr);
  });
});
