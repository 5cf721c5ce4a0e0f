/**
 * A file of millions of bad lines (one a repository ships, or a session file written over): a
 * line that is not complete JSON costs a thrown parse error and each bad line a warning, so a
 * 10 MB file took 99 seconds and 3.5 GB to show, and a larger one ran tern out of memory. tern
 * leaves at most one cut-off line per kill: past `MAX_TORN_LINES` the file is refused, and the
 * warnings about other bad lines are counted past the first hundred instead of kept.
 */
import { equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { SessionFileError } from "../../src/session/errors.ts";
import { loadSession } from "../../src/session/load.ts";
import { listSessions } from "../../src/session/paths.ts";
import { Session } from "../../src/session/session.ts";
import { loadTail } from "../../src/session/tail.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** `MAX_TORN_LINES` in load.ts. */
const MAX_TORN_LINES = 1000;

const HEADER = JSON.stringify({
  type: "session",
  version: 1,
  id: "11111111-2222-4333-8444-555555555555",
  cwd: "/elsewhere",
  created: "2026-01-01T00:00:00.000Z",
}) + "\n";

Deno.test("loadSession() and Session.open() refuse a file of more cut-off lines than kills leave", async () => {
  const ws = await tempWorkspace();
  try {
    const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    session.append({ type: "message", message: { role: "user", content: "hello" } });
    session.close();
    await Deno.writeTextFile(session.path, "{x}\n".repeat(MAX_TORN_LINES + 1), { append: true });
    const refused = (thrown: Error) => {
      ok(thrown instanceof SessionFileError, String(thrown));
      match(thrown.message, /more than 1000 of its lines are not complete JSON/);
      return true;
    };
    await rejects(loadSession(session.path), refused);
    await rejects(Session.open(session.path), refused);
    ok(thrown(() => loadTail(session.path)) instanceof SessionFileError);
    equal((await listSessions(ws.home)).length, 0, "a file every reader refuses is not listed");
  } finally {
    await ws.cleanup();
  }
});

Deno.test("loadSession() keeps a hundred warnings of a file's bad lines and counts the rest", async () => {
  const ws = await tempWorkspace();
  try {
    const path = join(ws.dir, "shipped.jsonl");
    await Deno.writeTextFile(path, HEADER + "{x}\n".repeat(MAX_TORN_LINES) + "{}\n".repeat(50_000));
    const loaded = await loadSession(path);
    equal(loaded.warnings.length, 101);
    match(loaded.warnings.at(-1)!, /^50900 more warnings about the lines of ".*" not shown$/);
    const tail = loadTail(path);
    equal(tail.warnings.length, 101);
    // Read from the end: the last lines' warnings are the ones kept.
    match(tail.warnings[0], /^Skipped the line at byte \d+ .*: no string "id" and "timestamp"$/);
    match(tail.warnings.at(-1)!, /^50900 more warnings/);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern sessions show refuses a shipped file of cut-off lines with exit code 2, at once", async () => {
  const ws = await tempWorkspace();
  try {
    const path = join(ws.dir, "shipped.jsonl");
    await Deno.writeTextFile(path, HEADER + "x\n".repeat(2_000_000));
    const started = performance.now();
    const run = await runTern(["sessions", "show", path], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home },
    });
    equal(run.code, 2, run.stderr);
    match(
      run.stderr,
      /^tern: Cannot load session ".*shipped\.jsonl": more than 1000 of its lines/m,
    );
    ok(performance.now() - started < 20_000, "reading stopped at the limit");
  } finally {
    await ws.cleanup();
  }
});

/** What `fn` throws. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}
