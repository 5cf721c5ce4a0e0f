/**
 * tern's error line quotes names it was given: a repository's file name reached through the
 * shell (`tern run --image "$(ls *.png)"`) may hold a line break and escape sequences. The
 * error says what was wrong on lines of its own: none of its later lines starts at column 0,
 * where it could pass for one of tern's (`tern: …`), and no sequence reaches the terminal.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

// deno-lint-ignore no-control-regex
const OBEYED = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

Deno.test("main() indents the lines after the first of an error that quotes a name with a line break", async () => {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const name = "shot\ntern: session 1234abcd (continue it with tern run -c)\x1b[2K\n✓ a.png";
  try {
    await Deno.writeFile(join(ws.dir, "a.png"), new Uint8Array([1, 2, 3]));
    const run = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "gpt-4o", "--image", name, "hi"],
      { cwd: ws.dir, env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" } },
    );
    equal(run.code, 2, run.stderr);
    const lines = run.stderr.trimEnd().split("\n").filter((line) => !line.includes("as root"));
    ok(lines[0].startsWith('tern: Cannot attach image "shot'), run.stderr);
    equal(lines.length, 3, run.stderr);
    for (const line of lines.slice(1)) ok(line.startsWith("  "), JSON.stringify(run.stderr));
    ok(!OBEYED.test(run.stderr.replaceAll("\n", "")), JSON.stringify(run.stderr));
    equal(server.requests.length, 0);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
