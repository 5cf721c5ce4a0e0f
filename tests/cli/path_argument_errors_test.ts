/**
 * A path the person typed that the file system cannot look up (a part of it is a file, a loop
 * of links, a name too long) is bad input: one line naming the path and why, exit code 2, never
 * an internal error with a stack.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const CRASH = /internal error|^\s+at |file:\/\//m;

Deno.test("audit, sessions and run --resume refuse a path of the wrong shape as bad input", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  try {
    const file = join(ws.dir, "notes.txt");
    await Deno.writeTextFile(file, "x");
    const loop = join(ws.dir, "loop");
    await Deno.symlink(loop, loop);
    const long = "a".repeat(5000);
    const cases: Array<[string[], RegExp]> = [
      [
        ["audit", `${file}/x`],
        /Cannot open file ".*notes\.txt\/x": a part of its path is not a folder/,
      ],
      [
        ["audit", `${loop}/a.jsonl`],
        /Cannot open file ".*loop\/a\.jsonl": its path goes through a loop/,
      ],
      [["audit", long], /Cannot open file ".*\/audit\/a+\.jsonl": file name too long/],
      [
        ["sessions", "show", `${file}/x.jsonl`],
        /Cannot open session ".*notes\.txt\/x\.jsonl": a part/,
      ],
      [
        ["sessions", "export", `${loop}/a.jsonl`],
        /Cannot open session ".*loop\/a\.jsonl": its path/,
      ],
      [
        ["sessions", "show", `/tmp/${long}.jsonl`],
        /Cannot open session "\/tmp\/a+\.jsonl": file name too long/,
      ],
      [
        ["run", "-m", "scripted", "-r", `${file}/x.jsonl`, "hi"],
        /Cannot open session ".*": a part/,
      ],
    ];
    for (const [args, expected] of cases) {
      const run = await runTern(args, { cwd: ws.dir, env });
      const where = `${args.join(" ").slice(0, 200)}: ${run.stderr.slice(0, 600)}`;
      equal(run.code, 2, where);
      match(run.stderr, expected, where);
      ok(!CRASH.test(run.stderr), where);
    }
  } finally {
    await ws.cleanup();
  }
});
