/**
 * A hostile model against the tool worker's Deno permission audit: calls in a loop must not
 * fill the disk with `audit/deno-*.jsonl` lines.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { REAL_HANDLER, succeeded, withBox, withHost } from "./_worker_suite.ts";

function sizeOrZero(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

Deno.test("WorkerHost stops the Deno audit once its files pass the limit, and tools still run", async () => {
  await withBox(async (box) => {
    for (let i = 0; i < 200; i++) Deno.writeTextFileSync(join(box.ws, `f${i}.txt`), "x\n");
    const auditFile = (run: number) => join(box.outside, `audit-${run}.jsonl`);
    await withHost(
      box,
      { handlerUrl: REAL_HANDLER, auditFile, auditLimitBytes: 1000 },
      async (host) => {
        succeeded(await host.call("grep", { pattern: "zzz" }));
        const first = sizeOrZero(auditFile(1));
        ok(first > 1000, `one grep over 200 files writes more than the limit: ${first}`);
        // The call that went past the limit still names its file (the gate's record of it).
        equal(host.auditPath, auditFile(1));
        for (let k = 0; k < 4; k++) succeeded(await host.call("grep", { pattern: "zzz" }));
        equal(host.auditPath, null);
        const total = [1, 2, 3, 4, 5, 6].reduce((sum, run) => sum + sizeOrZero(auditFile(run)), 0);
        ok(total < first * 2, `the audit grew past its limit: ${total} bytes after ${first}`);
      },
    );
  });
});
