/**
 * A session resumed by a new tern run: the processes the run before started ended with it, so
 * ids go on after the ones its conversation names, and the model's old id says its process
 * ended before the resume instead of stopping a new one. Real processes (no sandbox), the real
 * session file; the model is scripted.
 */
import { match, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});
const start = (id: string) =>
  call(id, "bash", {
    command: "echo up; exec sleep 60",
    run_in_background: true,
    ready_text: "up",
    timeout_ms: 120_000,
  });

Deno.test("a resumed session's background ids go on and an old id says it ended before the resume", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bg-resume-" }));
  const dir = join(root, "ws");
  const home = join(root, "home");
  for (const folder of [dir, home]) await Deno.mkdir(folder);
  const saved = ["TERN_HOME", "HOME", "TERN_API_KEY"].map((name) => [name, Deno.env.get(name)]);
  Deno.env.set("TERN_HOME", join(home, ".tern"));
  Deno.env.set("HOME", home);
  Deno.env.set("TERN_API_KEY", "sk-test");
  const requests: ModelRequest[] = [];
  const script = [
    start("c1"),
    { text: "started" },
    call("c2", "process_stop", { id: "p1" }),
    start("c3"),
    { text: "ok" },
  ];
  try {
    await withScriptedServer((request, i) => {
      requests.push(request);
      return script[i] ?? { text: "ok" };
    }, async (server) => {
      const flags = { baseUrl: server.baseUrl, mode: "bypass" as const, noSandbox: true };
      for (
        const [task, session] of [["start a server", undefined], ["stop it", {
          continue: true,
        }]] as const
      ) {
        const agent = await openAgentSession({
          workspace: dir,
          flags,
          ...(session ? { session } : {}),
          emit: () => {},
          warn: () => {},
        });
        try {
          await agent.conversation.turn(task);
        } finally {
          await agent.close();
        }
      }
    });
    const told = (request: ModelRequest | undefined) =>
      String(request?.messages.filter((m) => m.role === "tool").at(-1)?.content ?? "");
    match(told(requests[1]), /Started p1\b/);
    match(told(requests[3]), /"p1": it ended before this session was resumed/);
    const second = told(requests[4]);
    ok(!/Started p1\b/.test(second), second);
    match(second, /Started p2\b/);
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name!);
      else Deno.env.set(name!, value);
    }
    await Deno.remove(root, { recursive: true });
  }
});
