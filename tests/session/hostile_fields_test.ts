/**
 * A session file a repository ships (`tern sessions show ./shared.jsonl`) may hold any JSON in
 * the fields tern shows without a type of their own: a fork's `parent`, a subagent's
 * `subagentOf` in the header, a subagent record's task and status. An object there, even one
 * whose `toString` is no function, gives a clear error (a header of another shape is no header)
 * or is shown as the JSON it is, never an internal error or "[object Object]".
 */
import { equal, match, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { parseSessionHeader } from "../../src/session/load.ts";
import { SessionFileError } from "../../src/session/errors.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const HEADER = {
  type: "session",
  version: 1,
  id: "h1",
  cwd: "/elsewhere",
  created: "2026-01-01T00:00:00.000Z",
  ternVersion: "1.0.0",
};

const USER = {
  type: "message",
  id: "a",
  parentId: null,
  timestamp: "2026-01-01T00:00:01.000Z",
  message: { role: "user", content: "hello" },
};

Deno.test("parseSessionHeader() refuses a parent or subagentOf of another shape", () => {
  const malformed = [
    { parent: { id: { toString: 1 }, path: "/p", leafId: null } },
    { parent: "from elsewhere" },
    { parent: { id: "p", path: "/p", leafId: 5 } },
    { subagentOf: 5 },
    { subagentOf: { sessionId: "p", path: "/p", agentId: "a", runId: "r", taskName: {} } },
    { ternVersion: { toString: 1 } },
    { serverChosenBy: ["project:/x"] },
  ];
  for (const fields of malformed) {
    const line = JSON.stringify({ ...HEADER, ...fields });
    throws(() => parseSessionHeader(line, "/f.jsonl"), (error: unknown) => {
      ok(error instanceof SessionFileError, String(error));
      match(error.message, /is not a session header \("\w+" is malformed\)/);
      return true;
    }, line);
  }
  const good = { parent: { id: "p", path: "/p", leafId: null } };
  equal(parseSessionHeader(JSON.stringify({ ...HEADER, ...good }), "/f").parent?.id, "p");
});

Deno.test("tern sessions show|tree on a header with an object for an id exit 2, naming it", async () => {
  const ws = await tempWorkspace();
  try {
    const file = join(ws.dir, "shared.jsonl");
    const header = { ...HEADER, parent: { id: { toString: 1 }, path: "/p", leafId: "x" } };
    await Deno.writeTextFile(file, [header, USER].map((line) => JSON.stringify(line)).join("\n"));
    for (const action of ["show", "tree", "export"]) {
      const run = await runTern(["sessions", action, "./shared.jsonl"], {
        cwd: ws.dir,
        env: { TERN_HOME: ws.home, HOME: ws.home },
        signal: AbortSignal.timeout(60_000),
      });
      equal(run.code, 2, `${action}: ${run.stderr}`);
      ok(!run.stderr.includes("internal error"), run.stderr);
      match(run.stderr, /shared\.jsonl": the first line is not a session header \("parent"/);
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern sessions tree shows a subagent record's object fields as JSON", async () => {
  const ws = await tempWorkspace();
  try {
    const file = join(ws.dir, "shared.jsonl");
    const records = [
      { kind: "completion", taskName: "t1", status: { toString: 1 } },
      { kind: { toString: 1 }, taskName: ["x"] },
      { kind: "final", final: { status: { valueOf: 2 } } },
    ].map((data, i) => ({
      type: "subagent",
      id: `s${i}`,
      parentId: i === 0 ? "a" : `s${i - 1}`,
      timestamp: "2026-01-01T00:00:02.000Z",
      data,
    }));
    const lines = [HEADER, USER, ...records].map((line) => JSON.stringify(line));
    await Deno.writeTextFile(file, lines.join("\n") + "\n");
    const run = await runTern(["sessions", "tree", "./shared.jsonl"], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home },
      signal: AbortSignal.timeout(60_000),
    });
    equal(run.code, 0, run.stderr);
    ok(run.stdout.includes('subagent completion t1 {"toString":1}'), run.stdout);
    ok(run.stdout.includes('subagent {"toString":1} ["x"]'), run.stdout);
    ok(run.stdout.includes('subagent final  {"valueOf":2}'), run.stdout);
    ok(!run.stdout.includes("[object Object]"), run.stdout);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern sessions tree shows a child session's spawn record fields as JSON", async () => {
  const ws = await tempWorkspace();
  try {
    const folder = join(ws.home, "sessions", "planted");
    await Deno.mkdir(folder, { recursive: true });
    const parent = join(folder, "2026-01-01T00-00-00-000Z_p1aaaaaa.jsonl");
    const child = join(folder, "2026-01-01T00-00-01-000Z_c1bbbbbb.jsonl");
    const spawn = {
      type: "subagent",
      id: "s",
      parentId: "a",
      timestamp: "2026-01-01T00:00:02.000Z",
      data: {
        kind: "spawn",
        childSessionId: "c1bbbbbb",
        taskName: { toString: 1 },
        agentId: ["x"],
        runId: 5,
      },
    };
    const done = {
      ...spawn,
      id: "d",
      parentId: "s",
      data: { kind: "completion", childSessionId: "c1bbbbbb", status: { valueOf: 1 } },
    };
    const lines = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).join("\n") + "\n";
    await Deno.writeTextFile(
      parent,
      lines([{ ...HEADER, id: "p1aaaaaa", cwd: ws.dir }, USER, spawn, done]),
    );
    const link = { sessionId: "p1aaaaaa", path: parent, agentId: "a", runId: "r", taskName: "t" };
    await Deno.writeTextFile(
      child,
      lines([{ ...HEADER, id: "c1bbbbbb", cwd: ws.dir, subagentOf: link }, USER]),
    );
    const run = await runTern(["sessions", "tree", parent], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home },
      signal: AbortSignal.timeout(60_000),
    });
    equal(run.code, 0, run.stderr);
    ok(
      run.stdout.includes('c1bbbbbb  {"toString":1} (["x"], 5)  {"valueOf":1}  1 entries'),
      run.stdout,
    );
  } finally {
    await ws.cleanup();
  }
});
