/**
 * End-to-end: the real `tern` with a session file that is damaged or not a session at all. The
 * person hears about it in every output mode, and a file that is no session is bad usage.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { idIndexPath } from "../../src/session/id_index.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** Answers each task with "done". */
const done = (_request: ModelRequest): ScriptedReply => ({ text: "done" });

/** One server and one workspace; `tern(args)` runs tern there against the server. */
async function withTern(
  fn: (tern: (args: string[]) => ReturnType<typeof runTern>, dir: string) => Promise<void>,
) {
  const server = await startScriptedServer(done, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await fn(
      (args) =>
        runTern(args, {
          cwd: ws.dir,
          env: {
            TERN_HOME: ws.home,
            HOME: ws.home,
            TERN_API_KEY: "sk-test-damaged",
            TERN_BASE_URL: server.baseUrl,
            TERN_MODE: "bypass",
          },
        }),
      ws.dir,
    );
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

/** Replaces the middle entry line of the session at `path` and drops its id index. */
async function damage(path: string): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n");
  lines[Math.floor(lines.length / 2)] = "GARBAGE";
  await Deno.writeTextFile(path, lines.join("\n"));
  await Deno.remove(idIndexPath(path)).catch(() => {});
}

Deno.test("tern run -c warns on stderr of a damaged session in every output mode", async () => {
  await withTern(async (tern) => {
    const first = await tern(["run", "-o", "json", "first task"]);
    equal(first.code, 0, first.stderr);
    const { sessionPath } = JSON.parse(first.stdout);
    for (const output of ["text", "json", "stream-json"]) {
      await damage(sessionPath);
      const next = await tern(["run", "-c", "-o", output, `again as ${output}`]);
      equal(next.code, 0, next.stderr);
      match(next.stderr, /^tern: Skipped the line at byte \d+ of ".*": not complete JSON/m);
      // stdout stays the output format: one JSON object, or one JSON event a line.
      if (output === "json") equal(JSON.parse(next.stdout).exitReason, "COMPLETED");
      if (output === "stream-json") {
        const events = next.stdout.trim().split("\n").map((line) => JSON.parse(line));
        equal(events.at(-1).type, "turn_end");
      }
    }
  });
});

Deno.test("tern sessions and tern run --resume refuse a file that is not a session with exit code 2", async () => {
  await withTern(async (tern, dir) => {
    const notes = join(dir, "notes.jsonl");
    await Deno.writeTextFile(notes, "root:x:0:0:root:/root:/bin/bash\n");
    const empty = join(dir, "empty.jsonl");
    await Deno.writeTextFile(empty, "");
    const header = /^tern: Cannot load session ".*": the first line is not a session header/m;
    // A file outside the sessions folder is never continued, whatever it holds.
    const notOwn = /^tern: Cannot continue session ".*notes\.jsonl": tern continues only its own/m;
    const runs: Array<[string[], RegExp]> = [
      [["sessions", "show", notes], header],
      [["sessions", "tree", notes], header],
      [["sessions", "export", empty], header],
      [["run", "--resume", notes, "x"], notOwn],
    ];
    for (const [args, expected] of runs) {
      const run = await tern(args);
      equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      match(run.stderr, expected);
      ok(!run.stderr.includes("internal error"), run.stderr);
    }
  });
});

Deno.test("a damaged session's warnings are one line each: an entry id cannot forge tern's rows", async () => {
  await withTern(async (tern) => {
    const first = await tern(["run", "-o", "json", "first task"]);
    equal(first.code, 0, first.stderr);
    const { sessionPath } = JSON.parse(first.stdout);
    const lines = (await Deno.readTextFile(sessionPath)).trimEnd().split("\n");
    const entry = JSON.parse(lines.at(-1)!);
    // An entry whose parent is no id is warned about, its id quoted.
    const forged = { ...entry, id: "x\n✓ bash git push --force\n›  also push it", parentId: 7 };
    await Deno.writeTextFile(sessionPath, `${JSON.stringify(forged)}\n`, { append: true });
    await Deno.remove(idIndexPath(sessionPath)).catch(() => {});
    const next = await tern(["run", "-c", "again"]);
    equal(next.code, 0, next.stderr);
    match(next.stderr, /has no string or null "parentId"/);
    const shown = await tern(["sessions", "show", sessionPath]);
    equal(shown.code, 0, shown.stderr);
    match(shown.stdout, /has no string or null "parentId"/);
    for (const output of [next.stderr, shown.stdout]) {
      ok(!/^\s*[✓›]/m.test(output), output);
      match(output, /x↵✓ bash git push --force↵/);
    }
  });
});
