/**
 * End-to-end: the real `tern` with a session file damaged beyond a torn line (parent links in
 * a cycle, entries of a known type with a wrong shape), kept outside TERN_HOME, or on a full
 * disk. Each ends with the answer or a clear error, never a hang or a stack trace.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { idIndexPath } from "../../src/session/id_index.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

type Tern = (
  args: string[],
  options?: { home?: string; env?: Record<string, string> },
) => ReturnType<typeof runTern>;

/** One server answering "done" and one workspace; `tern(args)` runs tern there. */
async function withTern(
  fn: (tern: Tern, ws: { dir: string; home: string }, requests: () => string[]) => Promise<void>,
) {
  const server = await startScriptedServer(() => ({ text: "done" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const tern: Tern = (args, { home = ws.home, env = {} } = {}) =>
      runTern(args, {
        cwd: ws.dir,
        env: {
          TERN_HOME: home,
          HOME: home,
          TERN_API_KEY: "sk-test-damage",
          TERN_BASE_URL: server.baseUrl,
          TERN_MODE: "bypass",
          ...env,
        },
        signal: AbortSignal.timeout(60_000),
      });
    await fn(tern, ws, () => server.requests.map((r) => JSON.stringify(r.modelRequest)));
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

/** Runs two tasks and returns the session file's path. */
async function twoTurnSession(tern: Tern): Promise<string> {
  const first = await tern(["run", "-o", "json", "first task"]);
  equal(first.code, 0, first.stderr);
  const { sessionPath } = JSON.parse(first.stdout);
  const second = await tern(["run", "-c", "second task"]);
  equal(second.code, 0, second.stderr);
  return sessionPath;
}

/** Rewrites the entry lines of the session at `path` with `change`, dropping its id index. */
async function rewrite(
  path: string,
  original: string,
  change: (entries: Record<string, unknown>[]) => void,
): Promise<void> {
  const [header, ...lines] = original.trimEnd().split("\n");
  const entries = lines.map((line) => JSON.parse(line));
  change(entries);
  const text = [header, ...entries.map((entry) => JSON.stringify(entry))].join("\n") + "\n";
  await Deno.writeTextFile(path, text);
  await Deno.remove(idIndexPath(path)).catch(() => {});
}

const noTrace = (run: { stderr: string; stdout: string }) =>
  ok(!/internal error|\n\s+at /.test(run.stderr + run.stdout), run.stderr);

Deno.test("tern run -c ends on a session whose parent links form a cycle", async () => {
  await withTern(async (tern) => {
    const path = await twoTurnSession(tern);
    const original = await Deno.readTextFile(path);
    const cycles: Record<string, (entries: Record<string, unknown>[]) => void> = {
      "last entry its own parent": (entries) => entries.at(-1)!.parentId = entries.at(-1)!.id,
      "an earlier entry under the last": (entries) => entries[1].parentId = entries.at(-1)!.id,
    };
    for (const [name, change] of Object.entries(cycles)) {
      await rewrite(path, original, change);
      const run = await tern(["run", "-c", "-o", "json", `after ${name}`]);
      equal(run.code, 0, `${name}: ${run.stderr}`);
      equal(JSON.parse(run.stdout).text, "done", name);
      noTrace(run);
    }
  });
});

Deno.test("tern sessions show and run -c skip a malformed entry of a known type with a warning", async () => {
  await withTern(async (tern, _ws, requests) => {
    const path = await twoTurnSession(tern);
    const original = await Deno.readTextFile(path);
    const malformed: Record<string, Record<string, unknown>> = {
      "no message": {},
      "numeric content": { message: { role: "user", content: 12345 } },
      "tool calls not a list": { message: { role: "assistant", content: "", toolCalls: "x" } },
      "tool call fields": {
        message: { role: "assistant", content: "", toolCalls: [{ id: null, name: 5 }] },
      },
      "unknown role": { message: { role: "martian", content: "MARTIAN SAYS" } },
    };
    for (const [name, fields] of Object.entries(malformed)) {
      await rewrite(path, original, (entries) => {
        const last = entries.at(-1)!;
        entries.push({
          type: "message",
          id: "bad00001",
          parentId: last.id,
          timestamp: last.timestamp,
          ...fields,
        });
      });
      const warning =
        /Skipped (the )?line (at byte )?\d+ of ".*": a "message" entry whose "message" is missing/;
      const show = await tern(["sessions", "show", path]);
      equal(show.code, 0, `${name}: ${show.stderr}`);
      match(show.stdout + show.stderr, warning, name);
      noTrace(show);
      const run = await tern(["run", "-c", `after ${name}`]);
      equal(run.code, 0, `${name}: ${run.stderr}`);
      match(run.stderr, warning, name);
      noTrace(run);
    }
    ok(!requests().some((request) => request.includes("MARTIAN SAYS")));
  });
});

Deno.test("tern run -r and sessions compact refuse a session file outside TERN_HOME with exit code 2", async () => {
  await withTern(async (tern, ws) => {
    const path = await twoTurnSession(tern);
    // tern may write in TERN_HOME and TMPDIR only: the workspace is neither here.
    const tmp = join(ws.home, "tmp");
    await Deno.mkdir(tmp);
    // Also where tern may write: TMPDIR, and the workspace's .tern/memory, which a repository
    // can ship a forged session in.
    await Deno.mkdir(join(ws.dir, ".tern", "memory"), { recursive: true });
    const places = [
      join(ws.dir, "copied.jsonl"),
      join(tmp, "copied.jsonl"),
      join(ws.dir, ".tern", "memory", "copied.jsonl"),
    ];
    for (const elsewhere of places) {
      await Deno.copyFile(path, elsewhere);
      const before = await Deno.readFile(elsewhere);
      for (
        const args of [
          ["run", "-r", elsewhere, "again"],
          ["sessions", "compact", elsewhere],
          ["sessions", "rewind", elsewhere, "undo", "--yes"],
        ]
      ) {
        const run = await tern(args, { env: { TMPDIR: tmp } });
        equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
        match(
          run.stderr,
          /^tern: Cannot continue session ".*copied\.jsonl": tern continues only its own sessions, in the sessions folder under TERN_HOME; to go on from this file's conversation, import it with `tern sessions fork .*copied\.jsonl`/m,
        );
        // Never the advice to copy the file into TERN_HOME, where tern would obey all of it.
        ok(!/copy the file there/.test(run.stderr), run.stderr);
        noTrace(run);
      }
      deepEqual(await Deno.readFile(elsewhere), before, elsewhere);
    }
  });
});

Deno.test({
  name: "tern run says the disk is full when a session write fails with ENOSPC",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    await withTern(async (tern, ws) => {
      // A small file system for the sessions alone: nothing else tern keeps takes or frees room.
      const disk = join(ws.home, "sessions");
      await Deno.mkdir(disk, { mode: 0o700 });
      const command = (args: string[]) =>
        new Deno.Command(args[0], { args: args.slice(1) }).output();
      equal((await command(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", disk])).code, 0);
      try {
        const first = await tern(["run", "-o", "json", "first task"]);
        equal(first.code, 0, first.stderr);
        const filler = join(disk, ".filler");
        await command(["dd", "if=/dev/zero", `of=${filler}`, "bs=4k"]);
        const long = "x".repeat(20_000);
        for (const args of [["run", "-c", long], ["run", long]]) {
          const run = await tern(args);
          equal(run.code, 1, run.stderr);
          match(
            run.stderr,
            /^tern: Cannot write session ".*\.jsonl" \(ENOSPC\): the disk is full: free some space/m,
          );
          noTrace(run);
        }
        // The new session's headerless file is gone: the first one is still the one to continue.
        await Deno.remove(filler);
        const again = await tern(["run", "-c", "-o", "json", "again"]);
        equal(again.code, 0, again.stderr);
        equal(JSON.parse(again.stdout).sessionPath, JSON.parse(first.stdout).sessionPath);
      } finally {
        await command(["umount", disk]);
      }
    });
  },
});
