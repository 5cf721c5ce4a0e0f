/**
 * A grant for one turn ends with the turn: the conversation drops it (and stops a background
 * process started under it) as the turn ends, so the next turn is decided again.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

testWith([bwrapNeed], "Conversation.turn() ends the turn's grants as the turn ends", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-turn-grant-" }));
  const dir = join(root, "ws");
  const home = join(root, "home");
  const outside = join(root, "outside");
  for (const folder of [dir, home, outside]) await Deno.mkdir(folder);
  // The person's own rule lets request_permissions grant exactly this read, even in bypass.
  await Deno.mkdir(join(home, ".tern"));
  await Deno.writeTextFile(
    join(home, ".tern", "config.jsonc"),
    JSON.stringify({
      rules: [{ action: "allow", tool: "request_permissions", read: [outside] }],
    }),
  );
  const saved = ["TERN_HOME", "HOME", "TERN_API_KEY"].map((name) => [name, Deno.env.get(name)]);
  Deno.env.set("TERN_HOME", join(home, ".tern"));
  Deno.env.set("HOME", home);
  Deno.env.set("TERN_API_KEY", "sk-test");
  const call = (name: string, args: unknown) => ({
    toolCalls: [{ id: `c-${name}`, name, arguments: JSON.stringify(args) }],
  });
  try {
    await withScriptedServer(
      (_request, i) =>
        i === 0
          ? call("request_permissions", { reason: "x", read: [outside], scope: "turn" })
          : i === 1
          ? call("bash", { command: "sleep 30", run_in_background: true })
          : { text: "done" },
      async (server) => {
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, mode: "bypass" },
          emit: () => {},
          warn: () => {},
        });
        try {
          let during: readonly string[] | "all" = [];
          const sandbox = async () => (await agent.conversation.sandbox())!;
          const result = await agent.conversation.turn("compare");
          equal(result.toolCalls, 2, JSON.stringify(result.messages));
          const { runtime } = await sandbox();
          during = runtime.profile.grants.read;
          ok(during === "all" || !during.includes(outside), "the grant outlived its turn");
          // The background process started under the grant ended with it.
          const states = runtime.processes.list().map((info) => info.state);
          equal(states.length, 1);
          ok(states[0] === "stopped" || states[0] === "exited", states.join());
          ok(JSON.stringify(result.messages).includes("Granted"), JSON.stringify(result.messages));
        } finally {
          await agent.close();
        }
      },
    );
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name!);
      else Deno.env.set(name!, value);
    }
    await Deno.remove(root, { recursive: true });
  }
});
