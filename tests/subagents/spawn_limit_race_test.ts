/**
 * maxSubagents bounds the children running at once even for spawns that overlap: a spawn
 * counts from its check until its child runs, through every wait between (the idle child's
 * start it waits for included).
 */
import { equal, rejects } from "node:assert/strict";
import { type ParentSettings, SubagentHost } from "../../src/harness/subagents/host.ts";
import { Session } from "../../src/session/session.ts";
import { tempWorkspace } from "../support/tern_process.ts";

Deno.test("SubagentHost.spawn() refuses a spawn past maxSubagents while another is still starting", async () => {
  const ws = await tempWorkspace();
  const settings: ParentSettings = {
    workspace: ws.dir,
    ternHome: ws.home,
    model: "scripted",
    thinking: "off",
    baseUrl: "http://127.0.0.1:9/v1",
    profile: ":workspace",
    noSandbox: false,
    mode: "bypass",
    autoNetwork: "never",
    autoAskRules: "reviewer",
    maxRounds: 1,
    maxSubagents: 1,
    subagentTimeoutMs: 60_000,
    subagentEscalationTimeoutMs: 1_000,
    prestart: true,
  };
  const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
  const host = new SubagentHost({
    settings: () => settings,
    session: () => session,
    goal: () => "",
    checkModel: () => Promise.resolve(),
    warn: () => {},
  });
  const signal = new AbortController().signal;
  try {
    // The model's first call streams: the idle child starts, and the spawn waits for it.
    host.toolUse();
    const first = host.spawn({ taskName: "a", message: "CHILD a", tools: [], signal });
    // The first spawn is past its checks and waits for the idle child: it runs nothing yet.
    for (let i = 0; i < 20; i++) await Promise.resolve();
    equal(host.running().length, 0);
    await rejects(
      host.spawn({ taskName: "b", message: "CHILD b", tools: [], signal }),
      /1 subagents run already \(the limit, maxSubagents\)/,
    );
    await first;
    equal(host.running().length, 1);
  } finally {
    await host.close();
    session.close();
    await ws.cleanup();
  }
});
