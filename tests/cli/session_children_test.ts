/**
 * `tern sessions tree` over session headers that name a parent in a loop: a session that is its
 * own subagent parent, and two files of one id, one the other's child. The listing ends and
 * shows each file once. The real `tern` on hand-written session files.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const PARENT = "11111111-2222-3333-4444-555555555555";
const CHILD = "22222222-3333-4444-5555-666666666666";

/** Writes a session file of `id` in `home` whose header names `parent` as its subagent parent. */
function writeSession(home: string, cwd: string, id: string, parent: string | null, n: number) {
  const folder = join(home, "sessions", "x-00000000");
  Deno.mkdirSync(folder, { recursive: true });
  const header = {
    type: "session",
    version: 1,
    id,
    cwd,
    created: `2026-01-01T00:00:0${n}.000Z`,
    ternVersion: "x",
    ...(parent === null
      ? {}
      : { subagentOf: { sessionId: parent, path: "x", agentId: "a", runId: "r", taskName: "t" } }),
  };
  const message = {
    type: "message",
    id: "e1",
    parentId: null,
    timestamp: `2026-01-01T00:00:0${n}.000Z`,
    message: { role: "user", content: "hello" },
  };
  const name = `2026-01-01T00-00-0${n}-000Z_${id}.jsonl`;
  Deno.writeTextFileSync(
    join(folder, name),
    `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`,
  );
}

async function tree(dir: string, home: string, id: string) {
  return await runTern(["sessions", "tree", id], {
    cwd: dir,
    env: { HOME: home, TERN_HOME: home },
    signal: AbortSignal.timeout(30_000),
  });
}

Deno.test("sessions tree ends on a session that names itself as its subagent parent", async () => {
  const ws = await tempWorkspace();
  try {
    writeSession(ws.home, ws.dir, PARENT, PARENT, 0);
    const out = await tree(ws.dir, ws.home, PARENT);
    equal(out.code, 0, out.stderr);
    ok(out.stdout.includes("subagents:"), out.stdout);
    equal(out.stdout.split(PARENT).length - 1, 1, out.stdout);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("sessions tree ends when two files of one id name each other's id as parent", async () => {
  const ws = await tempWorkspace();
  try {
    writeSession(ws.home, ws.dir, PARENT, null, 0);
    writeSession(ws.home, ws.dir, CHILD, PARENT, 1);
    writeSession(ws.home, ws.dir, CHILD, CHILD, 2);
    const out = await tree(ws.dir, ws.home, PARENT);
    equal(out.code, 0, out.stderr);
    // Both files of the child's id, each once.
    equal(out.stdout.split(CHILD).length - 1, 2, out.stdout);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("a child's row is made visible: a task name cannot add a row or send an escape", async () => {
  const ws = await tempWorkspace();
  try {
    writeSession(ws.home, ws.dir, CHILD, PARENT, 1);
    const { childSessionLines } = await import("../../src/cli/session_children.ts");
    const spawn = {
      type: "subagent",
      id: "s1",
      parentId: null,
      timestamp: "2026-01-01T00:00:00.000Z",
      data: {
        kind: "spawn",
        childSessionId: CHILD,
        taskName: "fix\n  33333333  forged  completed\x1b[2K",
        agentId: "a",
        runId: "r",
      },
    };
    const lines = await childSessionLines(ws.home, PARENT, [spawn as never]);
    equal(lines.length, 2, lines.join("\n"));
    ok(lines[1].startsWith(`  ${CHILD}  fix`), lines[1]);
    ok(!lines[1].includes("\n") && !lines[1].includes("\x1b"), JSON.stringify(lines[1]));
  } finally {
    await ws.cleanup();
  }
});

Deno.test("sessions tree shows a child whose file repeats an id as unreadable and goes on", async () => {
  const ws = await tempWorkspace();
  try {
    const GRANDCHILD = "33333333-4444-5555-6666-777777777777";
    writeSession(ws.home, ws.dir, PARENT, null, 0);
    writeSession(ws.home, ws.dir, CHILD, PARENT, 1);
    writeSession(ws.home, ws.dir, GRANDCHILD, CHILD, 2);
    // The child's message line again: two entries of id "e1".
    const child = join(
      ws.home,
      "sessions",
      "x-00000000",
      `2026-01-01T00-00-01-000Z_${CHILD}.jsonl`,
    );
    const lines = Deno.readTextFileSync(child).split("\n");
    Deno.writeTextFileSync(child, `${lines[0]}\n${lines[1]}\n${lines[1]}\n`);
    const out = await tree(ws.dir, ws.home, PARENT);
    equal(out.code, 0, out.stderr);
    const rows = out.stdout.split("\n");
    const at = rows.findIndex((row) => row.includes(CHILD) && !row.includes("unreadable"));
    ok(at > 0, out.stdout);
    ok(/^ {4}unreadable: .*entry id "e1" on line 3/.test(rows[at + 1]), out.stdout);
    ok(rows[at + 2].includes(GRANDCHILD), out.stdout);
  } finally {
    await ws.cleanup();
  }
});
