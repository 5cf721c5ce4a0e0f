/**
 * A sandbox closed mid-session (a mode change, a rewind) stops its background processes: the
 * next sandbox goes on numbering them (a new `p1` would be taken for the stopped one whose id
 * the model still holds), and the next tool result says they were stopped. Real bubblewrap,
 * real processes; the model is scripted.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const start = (id: string) => ({
  toolCalls: [{
    id,
    name: "bash",
    arguments: JSON.stringify({
      command: "echo up; exec sleep 60",
      run_in_background: true,
      ready_text: "up",
      timeout_ms: 120_000,
    }),
  }],
});

testWith(
  [bwrapNeed],
  "after a reopened sandbox, background process ids go on and the model is told its processes were stopped",
  async () => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bg-reopen-" }));
    const dir = join(root, "ws");
    const home = join(root, "home");
    for (const folder of [dir, home]) await Deno.mkdir(folder);
    const saved = ["TERN_HOME", "HOME", "TERN_API_KEY"].map((name) => [name, Deno.env.get(name)]);
    Deno.env.set("TERN_HOME", join(home, ".tern"));
    Deno.env.set("HOME", home);
    Deno.env.set("TERN_API_KEY", "sk-test");
    const requests: ModelRequest[] = [];
    try {
      await withScriptedServer((request, i) => {
        requests.push(request);
        return i === 0 ? start("c1") : i === 2 ? start("c2") : { text: "ok" };
      }, async (server) => {
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, mode: "bypass" },
          emit: () => {},
          warn: () => {},
          person: () => Promise.resolve("once"),
        });
        try {
          await agent.conversation.turn("start a server");
          const { reopens } = await agent.configure({ mode: "ask" });
          equal(reopens, true);
          await agent.conversation.turn("start another");
        } finally {
          await agent.close();
        }
      });
      const told = (request: ModelRequest | undefined) =>
        String(request?.messages.filter((m) => m.role === "tool").at(-1)?.content ?? "");
      match(told(requests[1]), /\bp1\b/);
      const second = told(requests[3]);
      ok(!/Started p1\b/.test(second), second);
      match(second, /\bp2\b/);
      match(second, /p1 was stopped: its sandbox was closed/);
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) Deno.env.delete(name!);
        else Deno.env.set(name!, value);
      }
      await Deno.remove(root, { recursive: true });
    }
  },
);
