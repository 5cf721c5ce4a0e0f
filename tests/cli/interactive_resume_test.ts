/**
 * `/resume` and `/fork` in the interactive UI (line mode, driven over stdin): another
 * directory's session is refused as `tern run --resume` refuses it, and a session recorded
 * under a wider mode and profile is continued under the run's own, with a notice.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

/** Each user message gets `touch <outside>/<message>`; each tool result, a last answer. */
function touching(outside: string) {
  return (request: ModelRequest): ScriptedReply => {
    const last = request.messages.at(-1)!;
    if (last.role !== "user") return { text: "done" };
    const command = `touch ${join(outside, String(last.content))} && id`;
    return { toolCalls: [{ id: "t", name: "bash", arguments: JSON.stringify({ command }) }] };
  };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("tern /resume refuses a session of another directory and writes nothing to it", async () => {
  const ws = await tempWorkspace();
  const other = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-other-ws-" }));
  try {
    await withScriptedServer(() => ({ text: "answer" }), async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted",
        TERN_API_KEY: "x",
        NO_COLOR: "1",
      };
      const made = await runTern(["run", "-o", "json", "in the other one"], { cwd: other, env });
      equal(made.code, 0, made.stderr);
      const { session: id, sessionPath } = JSON.parse(made.stdout);
      const before = await Deno.readTextFile(sessionPath);
      const run = await runTernWithInput([], `/resume ${id}\nhello here\n`, { cwd: ws.dir, env });
      // The notice is wrapped at the terminal's width.
      const said = run.stdout.replace(/\s+/g, " ");
      ok(said.includes(`Session "${id}" belongs to "${other}", not "${ws.dir}"`), run.stdout);
      ok(!run.stdout.includes(`resumed session ${id.slice(0, 8)}`), run.stdout);
      equal(await Deno.readTextFile(sessionPath), before, "the other session was written to");
      // The message went on in this directory's own session.
      const listed = await runTern(["sessions", "list", "--json"], { cwd: ws.dir, env });
      equal(listed.code, 0, listed.stderr);
      const sessions = JSON.parse(listed.stdout) as Array<{ id: string; firstUserText?: string }>;
      equal(sessions.length, 1, listed.stdout);
      equal(sessions[0].firstUserText, "hello here");
    });
  } finally {
    await Deno.remove(other, { recursive: true });
    await ws.cleanup();
  }
});

testWith(
  [bwrapNeed],
  "tern /resume and /fork keep the run's mode and profile over a bypass session and say so",
  async () => {
    const ws = await tempWorkspace();
    const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-outside-" }));
    try {
      await withScriptedServer(touching(outside), async (server) => {
        const env = {
          HOME: ws.home,
          TERN_HOME: join(ws.home, ".tern"),
          TERN_BASE_URL: server.baseUrl,
          TERN_MODEL: "scripted",
          TERN_API_KEY: "x",
          NO_COLOR: "1",
        };
        const made = await runTern(
          ["run", "-o", "json", "--mode", "bypass", "-s", ":danger-full-access", "first"],
          { cwd: ws.dir, env },
        );
        equal(made.code, 0, made.stderr);
        ok(await exists(join(outside, "first")), "bypass with full access ran the command");
        const { session: id } = JSON.parse(made.stdout);
        const run = await runTernWithInput([], `/resume ${id}\n/fork\nafter-fork\n`, {
          cwd: ws.dir,
          env,
        });
        equal(run.code, 0, run.stderr);
        const out = run.stdout.replace(/\s+/g, " ");
        ok(out.includes(`resumed session ${id.slice(0, 8)}`), out);
        const kept = out.match(/Kept mode "ask": the session ran with mode "bypass"/g) ?? [];
        equal(kept.length, 2, `one notice for /resume, one for /fork:\n${out}`);
        match(out, /Kept profile ":workspace": the session ran with profile ":danger-full-access"/);
        equal(await exists(join(outside, "after-fork")), false, "the command ran after /fork");
      });
    } finally {
      await Deno.remove(outside, { recursive: true });
      await ws.cleanup();
    }
  },
);
