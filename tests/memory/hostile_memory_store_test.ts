/**
 * A facts file that is not a regular file (a folder, a FIFO) gives a clear error naming it: not
 * an internal error with a stack, and never a `tern memory` that waits forever on a FIFO.
 */
import { equal, match, ok } from "node:assert/strict";
import { userFactsPath } from "../../src/memory/facts.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern memory list names a facts file that is a folder or a FIFO and exits 1", async () => {
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home };
  const path = userFactsPath(ws.home);
  try {
    await Deno.mkdir(path, { recursive: true });
    for (const kind of ["folder", "FIFO"]) {
      if (kind === "FIFO") {
        await Deno.remove(path);
        const made = await new Deno.Command("mkfifo", { args: [path] }).output();
        equal(made.code, 0);
      }
      const listed = await runTern(["memory", "list"], {
        cwd: ws.dir,
        env,
        signal: AbortSignal.timeout(30_000),
      });
      equal(listed.code, 1, `${kind}: ${listed.stderr}`);
      match(listed.stderr, /^tern: Cannot read remembered facts ".*user\.jsonl": /);
      ok(!listed.stderr.includes("internal error"), listed.stderr);
    }
  } finally {
    await ws.cleanup();
  }
});
