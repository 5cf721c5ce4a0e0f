/**
 * `tern sessions tree` over a child session whose header line is torn or garbage: the child
 * cannot say whose it is, so it is found by the id its parent's spawn record names and listed
 * as unreadable with its file, not left out. The real `tern` on hand-written session files.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const PARENT = "11111111-2222-3333-4444-555555555555";
const CHILD = "22222222-3333-4444-5555-666666666666";
const GRANDCHILD = "33333333-4444-5555-6666-777777777777";

function fileOf(home: string, id: string, n: number): string {
  const folder = join(home, "sessions", "x-00000000");
  Deno.mkdirSync(folder, { recursive: true });
  return join(folder, `2026-01-01T00-00-0${n}-000Z_${id}.jsonl`);
}

function header(id: string, cwd: string, n: number, parent?: string) {
  return {
    type: "session",
    version: 1,
    id,
    cwd,
    created: `2026-01-01T00:00:0${n}.000Z`,
    ternVersion: "x",
    ...(parent === undefined
      ? {}
      : { subagentOf: { sessionId: parent, path: "x", agentId: "a", runId: "r", taskName: "t" } }),
  };
}

function entry(id: string, extra: Record<string, unknown>) {
  return { id, parentId: null, timestamp: "2026-01-01T00:00:00.000Z", ...extra };
}

const message = entry("e1", { type: "message", message: { role: "user", content: "hello" } });

async function tree(dir: string, home: string, id: string) {
  return await runTern(["sessions", "tree", id], {
    cwd: dir,
    env: { HOME: home, TERN_HOME: home },
    signal: AbortSignal.timeout(30_000),
  });
}

for (
  const [what, firstLine] of [
    ["torn", '{"type":"session","version":1,"id":"2222'],
    ["garbage", "\x00\x01 not json at all"],
  ] as const
) {
  Deno.test(`sessions tree lists a child whose header line is ${what} as unreadable`, async () => {
    const ws = await tempWorkspace();
    try {
      const spawn = entry("s1", {
        type: "subagent",
        data: {
          kind: "spawn",
          childSessionId: CHILD,
          taskName: "fix-it",
          agentId: "a",
          runId: "r",
        },
      });
      Deno.writeTextFileSync(
        fileOf(ws.home, PARENT, 0),
        [header(PARENT, ws.dir, 0), message, spawn].map((l) => JSON.stringify(l)).join("\n") +
          "\n",
      );
      const child = fileOf(ws.home, CHILD, 1);
      Deno.writeTextFileSync(child, `${firstLine}\n${JSON.stringify(message)}\n`);
      // A grandchild whose header names the child is still listed, under it.
      Deno.writeTextFileSync(
        fileOf(ws.home, GRANDCHILD, 2),
        [header(GRANDCHILD, ws.dir, 2, CHILD), message].map((l) => JSON.stringify(l)).join("\n") +
          "\n",
      );
      const out = await tree(ws.dir, ws.home, PARENT);
      equal(out.code, 0, out.stderr);
      const rows = out.stdout.split("\n");
      const at = rows.findIndex((row) => row.includes(CHILD));
      ok(at > 0 && rows[at - 1] === "subagents:", out.stdout);
      ok(rows[at].startsWith(`  ${CHILD}  fix-it (a, r)`), rows[at]);
      ok(rows[at].includes("header unreadable"), rows[at]);
      ok(rows[at].includes(`_${CHILD}.jsonl`), rows[at]);
      ok(rows[at + 1].startsWith(`    ${GRANDCHILD}`), out.stdout);
      // Control characters from the file stay visible, never sent to the terminal.
      ok(!out.stdout.includes("\x00") && !out.stdout.includes("\x01"), out.stdout);
    } finally {
      await ws.cleanup();
    }
  });
}

Deno.test("sessions list warns of a file named like a session whose header is torn", async () => {
  const ws = await tempWorkspace();
  try {
    const folder = join(ws.home, "sessions", "x-00000000");
    Deno.mkdirSync(folder, { recursive: true });
    const torn = join(folder, `2026-01-01T00-00-01-000Z_${CHILD}.jsonl`);
    Deno.writeTextFileSync(torn, `{"type":"sess\x1b[2J\n${JSON.stringify(message)}\n`);
    Deno.writeTextFileSync(
      join(folder, `2026-01-01T00-00-00-000Z_${PARENT}.jsonl`),
      [header(PARENT, ws.dir, 0), message].map((l) => JSON.stringify(l)).join("\n") + "\n",
    );
    const out = await runTern(["sessions", "list", "--all"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
      signal: AbortSignal.timeout(30_000),
    });
    equal(out.code, 0, out.stderr);
    ok(out.stdout.startsWith(PARENT.slice(0, 8)), out.stdout);
    equal(out.stdout.split("\n").length, 2, out.stdout);
    ok(out.stderr.includes(`tern: warning: Cannot load session "${torn}"`), out.stderr);
    ok(out.stderr.includes("not a session header"), out.stderr);
    ok(!out.stderr.includes("\x1b"), out.stderr);
    // JSON output stays the list of sessions alone.
    const json = await runTern(["sessions", "list", "--all", "--json"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
      signal: AbortSignal.timeout(30_000),
    });
    equal(JSON.parse(json.stdout).length, 1, json.stdout);
  } finally {
    await ws.cleanup();
  }
});
