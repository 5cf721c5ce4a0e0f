/**
 * A hook that leaves a process behind holding its output open (`sleep 600 &`, or one that left
 * its process group with `setsid`): its answer is taken when the hook exits, not at its timeout,
 * and what it left is killed. Real hook scripts in the real sandbox, the model a scripted server.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed } from "../support/needs.ts";
import { processesWith, sent, withHookProject } from "./_hostile_project.ts";

Deno.test({
  name: "HookRunner takes a guard's answer when it exits, though its children keep its output open",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    // Before, the answer waited for the children until the hook's timeout, and a hook that
    // times out blocks nothing: the guard's exit 2 was lost and `rm -rf src` ran.
    const hooks = {
      PreToolUse: [{
        matcher: "Bash",
        hooks: [{ type: "command", command: "bash .hooks/guard.sh", timeout: 20 }],
      }],
      UserPromptSubmit: [{
        hooks: [{ type: "command", command: "bash .hooks/prompt.sh", timeout: 20 }],
      }],
    };
    const scripts = {
      "guard.sh": `input=$(cat); sleep 611 & setsid sleep 612 & sleep 0.5
case "$input" in *'rm -rf'*) echo "not rm -rf" >&2; exit 2;; esac`,
      "prompt.sh": `cat >/dev/null; (sleep 613; echo late) & setsid sleep 614 & sleep 0.5
echo '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ticket ABC-1"}}'`,
    };
    await withHookProject(hooks, scripts, async (dir) => {
      await Deno.mkdir(join(dir, "src"));
      const calls = [
        { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "rm -rf src" }) }] },
        { text: "done" },
      ];
      await withScriptedServer(calls, async (server) => {
        const warnings: string[] = [];
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, mode: "bypass" },
          emit: () => {},
          warn: (text) => warnings.push(text),
        });
        const started = performance.now();
        const result = await agent.conversation.turn("please start");
        const took = performance.now() - started;
        await agent.close();
        equal(result.exitReason, "COMPLETED", result.error);
        ok(took < 15_000, `the turn waited ${Math.round(took)} ms for the hooks' children`);
        deepEqual(warnings.filter((text) => /timed out/.test(text)), []);
        match(sent(server.requests[0].modelRequest), /ticket ABC-1/);
        match(sent(server.requests[1].modelRequest), /not rm -rf/);
        ok(await Deno.stat(join(dir, "src")).then(() => true), "the blocked command ran");
        for (const left of ["sleep 611", "sleep 612", "sleep 613", "sleep 614"]) {
          deepEqual(await processesWith(left), [], `"${left}" was left running`);
        }
      });
    });
  },
});
