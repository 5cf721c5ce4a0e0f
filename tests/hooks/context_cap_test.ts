/**
 * What a hook says reaches the model capped: a SessionStart hook that prints 300,000 characters
 * and a UserPromptSubmit hook whose `additionalContext` is 50,000 add at most 10,000 each to
 * the prompt, with a note of how much was cut (real hooks in the real sandbox, a scripted model).
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";
import { MAX_HOOK_TEXT_CHARS } from "../../src/sandbox/hooks/run.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const START = `cat >/dev/null; head -c 300000 /dev/zero | tr '\\0' s`;
// A command substitution is outside what trust can pin in a hook's command: in a script.
const SUBMIT_SCRIPT =
  `cat >/dev/null; printf '{"hookSpecificOutput": {"additionalContext": "%s"}}' ` +
  `"$(head -c 50000 /dev/zero | tr '\\0' u)"\n`;
const SUBMIT = "bash .claude/submit.sh";

testWith(
  [bwrapNeed],
  "Conversation caps each hook's added context, saying how much was cut",
  async () => {
    const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "hooks-" }));
    const dir = join(root, "ws");
    const home = join(root, "home");
    await Deno.mkdir(join(dir, ".claude"), { recursive: true });
    await Deno.mkdir(home);
    await Deno.writeTextFile(join(dir, ".claude", "submit.sh"), SUBMIT_SCRIPT);
    await Deno.writeTextFile(
      join(dir, ".claude", "settings.json"),
      JSON.stringify({
        hooks: {
          SessionStart: [{ hooks: [{ type: "command", command: START }] }],
          UserPromptSubmit: [{ hooks: [{ type: "command", command: SUBMIT }] }],
        },
      }),
    );
    const saved = ["TERN_HOME", "HOME", "TERN_API_KEY"].map((name) => [name, Deno.env.get(name)]);
    Deno.env.set("TERN_HOME", home);
    Deno.env.set("HOME", home);
    Deno.env.set("TERN_API_KEY", "sk-test");
    try {
      const places = { ternHome: home, workspace: dir };
      await trustHooks(places, (await loadHooks(places)).sources.map((loaded) => loaded.source));
      await withScriptedServer([{ text: "done" }], async (server) => {
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, mode: "bypass" },
          emit: () => {},
          warn: () => {},
        });
        const result = await agent.conversation.turn("please start");
        await agent.close();
        equal(result.exitReason, "COMPLETED", result.error);
        const users = server.requests[0].modelRequest.messages.filter((m) => m.role === "user");
        const content = users.at(-1)!.content;
        const text = typeof content === "string" ? content : JSON.stringify(content);
        match(text, /please start/);
        match(text, /290000 more characters of this hook's output were cut/);
        match(text, /40000 more characters of this hook's output were cut/);
        ok(!text.includes("s".repeat(MAX_HOOK_TEXT_CHARS + 1)));
        ok(!text.includes("u".repeat(MAX_HOOK_TEXT_CHARS + 1)));
        ok(
          text.length < 2 * MAX_HOOK_TEXT_CHARS + 1000,
          `the prompt has ${text.length} characters`,
        );
      });
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) Deno.env.delete(name!);
        else Deno.env.set(name!, value);
      }
      await Deno.remove(root, { recursive: true });
    }
  },
);
