/**
 * A SessionEnd hook that never ends (a repository's, trusted once) cannot hold tern's close:
 * it is cut to `SESSION_END_MAX_S`, Ctrl-C stops it at once, the person is told, and its
 * process is gone. Real hook scripts in the real sandbox, the model a scripted server.
 */
import { deepEqual, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { SESSION_END_MAX_S } from "../../src/harness/session_hooks.ts";
import { showWarningsIn } from "../../src/core/warnings.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed } from "../support/needs.ts";
import { processesWith, withHookProject } from "./_hostile_project.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** A trusted SessionEnd hook that marks its start and then sleeps `seconds`. */
function withHangingEnd(seconds: number, body: (dir: string) => Promise<void>): Promise<void> {
  const hooks = {
    SessionEnd: [{ hooks: [{ type: "command", command: "bash .hooks/end.sh", timeout: 600 }] }],
  };
  const scripts = {
    "end.sh": `cat >/dev/null; touch "$CLAUDE_PROJECT_DIR/end-started"; sleep ${seconds}`,
  };
  return withHookProject(hooks, scripts, body);
}

/** `promise`'s value, or undefined when it takes more than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let guard: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) =>
    guard = setTimeout(() => resolve(undefined), ms)
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(guard);
  }
}

Deno.test({
  name: "Conversation.close() stops a SessionEnd hook past SESSION_END_MAX_S, and says so",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await withHangingEnd(621, async (dir) => {
      await withScriptedServer([{ text: "done" }], async (server) => {
        const warnings: string[] = [];
        const restore = showWarningsIn((text) => warnings.push(text));
        try {
          const agent = await openAgentSession({
            workspace: dir,
            flags: { baseUrl: server.baseUrl, mode: "bypass" },
            emit: () => {},
            warn: (text) => warnings.push(text),
          });
          await agent.conversation.turn("please start");
          const started = performance.now();
          const closed = await within(agent.close().then(() => true), 60_000);
          const took = performance.now() - started;
          ok(closed, "the close waited for the SessionEnd hook's own timeout");
          ok(took < (SESSION_END_MAX_S + 15) * 1000, `the close took ${Math.round(took)} ms`);
        } finally {
          restore();
        }
        match(
          warnings.join("\n"),
          new RegExp(`SessionEnd hook "bash .hooks/end.sh" timed out after ${SESSION_END_MAX_S} s`),
        );
        deepEqual(await processesWith("sleep 621"), []);
      });
    });
  },
});

Deno.test({
  name: "tern run: Ctrl-C while a SessionEnd hook runs stops it at once, and says so",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await withHangingEnd(622, async (dir) => {
      await withScriptedServer([{ text: "done" }], async (server) => {
        const tern = new Deno.Command(join(ROOT, "bin/tern"), {
          args: ["run", "--base-url", server.baseUrl, "-m", "scripted", "please start"],
          cwd: dir,
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const output = tern.output();
        for (
          let i = 0;
          i < 1200 && !(await Deno.stat(join(dir, "end-started")).catch(() => null));
          i++
        ) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        ok(await Deno.stat(join(dir, "end-started")), "the SessionEnd hook never started");
        const started = performance.now();
        tern.kill("SIGINT");
        // Past the bound, a second Ctrl-C (which exits at once) ends the test.
        const ended = await within(output, (SESSION_END_MAX_S - 3) * 1000);
        if (ended === undefined) tern.kill("SIGINT");
        const { stderr } = ended ?? await output;
        ok(ended, `tern waited ${Math.round(performance.now() - started)} ms after Ctrl-C`);
        match(
          new TextDecoder().decode(stderr),
          /SessionEnd hook "bash \.hooks\/end\.sh" could not run: it was stopped, as tern was closing and was interrupted/,
        );
        deepEqual(await processesWith("sleep 622"), []);
      });
    });
  },
});
