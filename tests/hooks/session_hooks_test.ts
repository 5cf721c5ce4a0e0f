/**
 * Session-level hooks through a real conversation: real hook scripts in the real sandbox, the
 * model a scripted server. SessionStart and UserPromptSubmit add context, UserPromptSubmit
 * blocks a prompt, Stop makes the turn go on, SessionEnd runs at close, PreToolUse blocks a
 * command the model asked for; an untrusted project hook never runs.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed } from "../support/needs.ts";

const SETTINGS = {
  hooks: {
    SessionStart: [{ hooks: [{ type: "command", command: "bash .hooks/start.sh" }] }],
    UserPromptSubmit: [{ hooks: [{ type: "command", command: "bash .hooks/prompt.sh" }] }],
    PreToolUse: [{
      matcher: "Bash",
      hooks: [{ type: "command", command: "bash .hooks/guard.sh" }],
    }],
    Stop: [{ hooks: [{ type: "command", command: "bash .hooks/stop.sh" }] }],
    SessionEnd: [{ hooks: [{ type: "command", command: "bash .hooks/end.sh" }] }],
    PreCompact: [{ hooks: [{ type: "command", command: "bash .hooks/compact.sh" }] }],
  },
};

const SCRIPTS: Record<string, string> = {
  "start.sh": `cat >/dev/null; touch "$CLAUDE_PROJECT_DIR/ran-start"; echo "the branch is main"`,
  "prompt.sh": `input=$(cat)
case "$input" in
  *forbidden*) echo "no forbidden prompts" >&2; exit 2;;
esac
echo '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ticket ABC-1"}}'`,
  "guard.sh": `grep -q 'rm -rf' && { echo "not rm -rf" >&2; exit 2; }; exit 0`,
  "stop.sh": `input=$(cat)
case "$input" in
  *'"stop_hook_active":false'*) echo '{"decision": "block", "reason": "run the tests first"}';;
esac
exit 0`,
  "end.sh": `cat > "$CLAUDE_PROJECT_DIR/ended.json"`,
  "compact.sh": `cat > "$CLAUDE_PROJECT_DIR/compact.json"`,
};

async function withProject(body: (dir: string, home: string) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "hooks-" }));
  const dir = join(root, "ws");
  const home = join(root, "home");
  await Deno.mkdir(join(dir, ".hooks"), { recursive: true });
  await Deno.mkdir(join(dir, ".claude"));
  await Deno.mkdir(home);
  await Deno.writeTextFile(join(dir, ".claude", "settings.json"), JSON.stringify(SETTINGS));
  for (const [name, text] of Object.entries(SCRIPTS)) {
    await Deno.writeTextFile(join(dir, ".hooks", name), text + "\n");
  }
  const saved = ["TERN_HOME", "HOME", "TERN_API_KEY"].map((name) => [name, Deno.env.get(name)]);
  Deno.env.set("TERN_HOME", home);
  Deno.env.set("HOME", home);
  Deno.env.set("TERN_API_KEY", "sk-test");
  try {
    await body(dir, home);
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name!);
      else Deno.env.set(name!, value);
    }
    await Deno.remove(root, { recursive: true });
  }
}

function lastUser(request: ModelRequest): string {
  const users = request.messages.filter((message) => message.role === "user");
  const content = users.at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test({
  name: "Conversation never runs an untrusted project hook",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await withProject(async (dir) => {
      await withScriptedServer([{ text: "done" }], async (server) => {
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, mode: "bypass" },
          emit: () => {},
          warn: () => {},
        });
        const result = await agent.conversation.turn("please start");
        await agent.close();
        equal(result.exitReason, "COMPLETED");
        equal(server.requests.length, 1, "no Stop hook made the turn go on");
        ok(!lastUser(server.requests[0].modelRequest).includes("ticket ABC-1"));
        ok(!(await exists(join(dir, "ran-start"))));
        ok(!(await exists(join(dir, "ended.json"))));
      });
    });
  },
});

Deno.test({
  name:
    "Conversation runs trusted session hooks: context, a blocked prompt, Stop, SessionEnd, PreToolUse",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await withProject(async (dir, home) => {
      const places = { ternHome: home, workspace: dir };
      await trustHooks(places, (await loadHooks(places)).sources.map((loaded) => loaded.source));
      const script = (_request: ModelRequest, index: number) =>
        [
          { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "rm -rf src" }) }] },
          { text: "done" },
          { text: "tests pass" },
        ][index] ?? { text: "extra" };
      await withScriptedServer(script, async (server) => {
        await Deno.mkdir(join(dir, "src"));
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, mode: "bypass" },
          emit: () => {},
          warn: () => {},
        });
        const result = await agent.conversation.turn("please start");
        equal(result.exitReason, "COMPLETED", result.error);
        equal(result.text, "tests pass");
        const first = lastUser(server.requests[0].modelRequest);
        match(first, /please start/);
        match(first, /the branch is main/);
        match(first, /ticket ABC-1/);
        // The hooks' words come framed, after the person's, in markers they cannot forge.
        const framed =
          /^please start\n\n--- BEGIN HOOK CONTEXT (\w+) [^\n]*---\n[\s\S]*\n--- END HOOK CONTEXT (\w+) ---$/
            .exec(first);
        ok(framed !== null && framed[1] === framed[2], first);
        // PreToolUse blocked the command: its reason was the tool's result.
        const toolResult = server.requests[1].modelRequest.messages.at(-1)!;
        match(JSON.stringify(toolResult), /not rm -rf/);
        ok(await exists(join(dir, "src")), "the blocked command did not run");
        // Stop blocked once: the turn went on with its reason.
        equal(server.requests.length, 3);
        match(lastUser(server.requests[2].modelRequest), /run the tests first/);

        const blocked = await agent.conversation.turn("do the forbidden thing");
        equal(blocked.exitReason, "CANCELLED");
        match(blocked.error!, /no forbidden prompts/);
        equal(server.requests.length, 3, "a blocked prompt never reaches the model");

        await agent.conversation.preCompact("manual", "keep the API notes");
        const compact = JSON.parse(await Deno.readTextFile(join(dir, "compact.json")));
        equal(compact.hook_event_name, "PreCompact");
        equal(compact.trigger, "manual");
        equal(compact.custom_instructions, "keep the API notes");

        await agent.close();
        const ended = JSON.parse(await Deno.readTextFile(join(dir, "ended.json")));
        equal(ended.hook_event_name, "SessionEnd");
        equal(ended.cwd, dir);
        equal(ended.session_id, agent.session.id);
      });
    });
  },
});

Deno.test({
  name: "A PreCompact hook that hangs ends with the compaction's cancel, not at its timeout",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await withProject(async (dir, home) => {
      await Deno.writeTextFile(
        join(dir, ".claude", "settings.json"),
        JSON.stringify({
          hooks: {
            PreCompact: [{
              hooks: [{ type: "command", command: "bash .hooks/hang.sh", timeout: 600 }],
            }],
          },
        }),
      );
      await Deno.writeTextFile(
        join(dir, ".hooks", "hang.sh"),
        `touch "$CLAUDE_PROJECT_DIR/hang-started"; sleep 600\n`,
      );
      const places = { ternHome: home, workspace: dir };
      await trustHooks(places, (await loadHooks(places)).sources.map((loaded) => loaded.source));
      await withScriptedServer([{ text: "done" }], async (server) => {
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, mode: "bypass" },
          emit: () => {},
          warn: () => {},
        });
        try {
          const cancel = new AbortController();
          const compacting = agent.compact({ signal: cancel.signal }).catch(() => undefined);
          // Cancelled once the hook runs; the guard is far below the hook's timeout.
          for (let i = 0; i < 600 && !(await exists(join(dir, "hang-started"))); i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          ok(await exists(join(dir, "hang-started")), "the hook never started");
          cancel.abort();
          let guard: ReturnType<typeof setTimeout> | undefined;
          const ended = await Promise.race([
            compacting.then(() => true),
            new Promise<false>((resolve) => guard = setTimeout(() => resolve(false), 60_000)),
          ]);
          clearTimeout(guard);
          ok(ended, "the compaction waited for the hook's timeout");
        } finally {
          await agent.close();
        }
      });
    });
  },
});
