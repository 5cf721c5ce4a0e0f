/**
 * A workspace that holds the system's program folders (`/`, `/usr`, `/usr/bin`) is refused up
 * front, by every command bound to a workspace: tern never starts a program from its workspace
 * on the host, so there bash, bubblewrap and git could not start. A program tern cannot find
 * is said in one line, not as an internal error.
 */
import { equal, match, ok } from "node:assert/strict";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** What a stack trace or an internal error looks like on stderr. */
const CRASH = /internal error|^\s+at |file:\/\//m;

Deno.test("commands refuse a workspace that holds the system's programs, with exit code 2", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home };
  try {
    const cases = [
      ["doctor", "-C", "/"],
      ["config", "-C", "/usr"],
      ["sandbox", "explain", "-C", "/usr/bin"],
      ["index", "/"],
      ["run", "-C", "/", "-m", "scripted", "hi"],
    ];
    for (const args of cases) {
      const run = await runTern(args, { cwd: ws.dir, env: { ...env, TERN_API_KEY: "k" } });
      const where = `${args.join(" ")}: ${run.stderr}`;
      equal(run.code, 2, where);
      match(run.stderr, /Cannot use workspace "\/[a-z/]*": it holds "\/[a-z/]*bin"/, where);
      match(run.stderr, /start tern in your project's folder/, where);
      ok(!CRASH.test(run.stderr), where);
    }
    // A folder that holds none of them is a workspace as ever.
    const fine = await runTern(["config"], { cwd: ws.dir, env });
    equal(fine.code, 0, fine.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("a program tern cannot find on PATH is named in one line with exit code 1", async () => {
  const ws = await tempWorkspace();
  try {
    for (const args of [["doctor"], ["sandbox", "explain"]]) {
      const run = await runTern(args, {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ws.home, PATH: "/nonexistent" },
      });
      const where = `${args.join(" ")}: ${run.stderr}`;
      equal(run.code, 1, where);
      match(run.stderr, /^tern: Cannot start the program "bash": it is not installed/m, where);
      ok(!CRASH.test(run.stderr), where);
    }
  } finally {
    await ws.cleanup();
  }
});
