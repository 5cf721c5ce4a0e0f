/**
 * A symbolic link (or anything but a folder) at `$TERN_HOME/sessions` is refused with a message
 * that names it and says what to do, exit code 2 and no stack trace: tern keeps its sessions only
 * in real folders, so a link cannot lead their writes, or a session tern would obey, to a folder
 * commands may write. Nothing is written where the link points.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const REFUSED =
  /^tern: Cannot use the session folder ".*\/sessions": it is (a symbolic link|a file), not a folder: .*(move what the link points to|remove it)/m;

Deno.test("tern run refuses a link or a file at TERN_HOME's sessions folder with exit code 2", async () => {
  const server = await startScriptedServer([{ text: "done" }, { text: "done" }], {
    chunkDelayMs: 0,
  });
  const ws = await tempWorkspace();
  try {
    const env = {
      TERN_HOME: ws.home,
      HOME: ws.home,
      TERN_API_KEY: "sk-test-sessions",
      TERN_BASE_URL: server.baseUrl,
    };
    const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
    const sessions = join(ws.home, "sessions");
    const elsewhere = join(ws.dir, "elsewhere");
    await Deno.mkdir(elsewhere);
    const targets: Array<[string, () => Promise<void>]> = [
      ["a link to nothing", () => Deno.symlink(join(ws.dir, "missing"), sessions)],
      ["a link to a folder", () => Deno.symlink(elsewhere, sessions)],
      ["a file", () => Deno.writeTextFile(sessions, "")],
    ];
    for (const [what, make] of targets) {
      await make();
      const run = await tern(["run", "hello"]);
      equal(run.code, 2, `${what}: ${run.stderr}`);
      match(run.stderr, REFUSED, what);
      ok(!run.stderr.includes("internal error") && !/\n\s+at /.test(run.stderr), run.stderr);
      await Deno.remove(sessions);
    }
    deepEqual([...Deno.readDirSync(elsewhere)], [], "nothing written through the link");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("tern run -c refuses to continue a session through a link at the sessions folder", async () => {
  const server = await startScriptedServer([{ text: "done" }, { text: "again" }], {
    chunkDelayMs: 0,
  });
  const ws = await tempWorkspace();
  try {
    const env = {
      TERN_HOME: ws.home,
      HOME: ws.home,
      TERN_API_KEY: "sk-test-sessions",
      TERN_BASE_URL: server.baseUrl,
    };
    const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
    const first = await tern(["run", "hello"]);
    equal(first.code, 0, first.stderr);
    // The sessions moved to a folder a command could write, and a link left in their place.
    const sessions = join(ws.home, "sessions");
    const moved = join(ws.dir, "moved-sessions");
    await Deno.rename(sessions, moved);
    await Deno.symlink(moved, sessions);
    const next = await tern(["run", "-c", "again"]);
    equal(next.code, 2, next.stderr);
    match(next.stderr, REFUSED);
    equal(server.requests.length, 1, "the refused run asked the model nothing");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
