/**
 * `tern sessions` prints what the model wrote without a control a terminal would obey; JSON
 * keeps it exact. The real process against the scripted server.
 */
import { equal, ok } from "node:assert/strict";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const HOSTILE = "\x1b]0;pwned\x07Done \x1b[2K\rreally\u202e \x1b]52;c;eA==\x07\x9b2J";
// deno-lint-ignore no-control-regex
const OBEYED = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

Deno.test("tern sessions list, show, tree and export print the model's words without controls", async () => {
  const server = await startScriptedServer([{ text: HOSTILE }], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = {
      TERN_HOME: ws.home,
      HOME: ws.home,
      TERN_API_KEY: "sk-test-sessions",
      TERN_BASE_URL: server.baseUrl,
    };
    const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
    const run = await tern(["run", "-o", "json", "task \x1b]0;t\x07one"]);
    equal(run.code, 0, run.stderr);
    const { session } = JSON.parse(run.stdout);
    for (const args of [["list"], ["show", session], ["tree", session], ["export", session]]) {
      const shown = await tern(["sessions", ...args]);
      equal(shown.code, 0, shown.stderr);
      ok(!OBEYED.test(shown.stdout), `${args[0]}: ${JSON.stringify(shown.stdout)}`);
      ok(!OBEYED.test(shown.stderr), `${args[0]}: ${JSON.stringify(shown.stderr)}`);
    }
    const exported = await tern(["sessions", "export", session]);
    ok(exported.stdout.includes("Done \nreally"), exported.stdout);
    const json = JSON.parse((await tern(["sessions", "export", session, "--json"])).stdout);
    ok(JSON.stringify(json).includes(JSON.stringify(HOSTILE)), "JSON keeps the exact text");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
