/**
 * Flags that contradict each other on one command line: `--no-sandbox` with `--profile` asks for
 * no sandbox and for a profile's limits at once. It is refused before anything starts, instead
 * of dropping the profile (and its limits) silently.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern run --no-sandbox --profile :read-only is refused: no write, no session", async () => {
  const write = { path: "written.txt", content: "the profile was dropped\n" };
  const server = await startScriptedServer([
    { toolCalls: [{ id: "w1", name: "write", arguments: JSON.stringify(write) }] },
    { text: "done" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    for (
      const flags of [
        ["--no-sandbox", "--profile", ":read-only"],
        ["-s", ":read-only", "--no-sandbox"],
      ]
    ) {
      const [run, ...rest] = scriptedRunArgs(server.baseUrl, "write the file");
      const result = await runTern([run, ...flags, ...rest], {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-test" },
      });
      equal(result.code, 2, result.stdout + result.stderr);
      match(result.stderr, /--no-sandbox and --profile cannot be used together/);
      equal(
        result.stderr.trim().split("\n").filter((l) => !l.includes("running as root")).length,
        1,
      );
    }
    equal(server.requests.length, 0);
    ok(!(await Deno.stat(join(ws.dir, write.path)).catch(() => undefined)));
    ok(!(await Deno.stat(join(ws.home, "sessions")).catch(() => undefined)));
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
