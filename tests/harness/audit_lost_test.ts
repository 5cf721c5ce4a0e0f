/**
 * A subagent's tool call is audited through the conversation, which opens the sandbox for it:
 * when the sandbox cannot open, the record is lost, and the person is told so.
 */
import { match, ok } from "node:assert/strict";
import { join } from "node:path";
import { DEFAULTS } from "../../src/config/mod.ts";
import { showWarningsIn } from "../../src/core/warnings.ts";
import { Conversation } from "../../src/harness/conversation.ts";
import { ScriptedProvider } from "../../src/llm/scripted.ts";
import { Session } from "../../src/session/session.ts";

Deno.test("Conversation.audit() warns when the record is lost because the sandbox cannot open", async () => {
  const root = await Deno.makeTempDir({ prefix: "tern-audit-lost-" });
  const warnings: string[] = [];
  const restore = showWarningsIn((line) => warnings.push(line));
  const workspace = join(root, "ws");
  const ternHome = join(root, "home");
  await Deno.mkdir(workspace);
  const session = Session.create(ternHome, { cwd: workspace, ternVersion: "test" });
  const conversation = new Conversation({
    workspace,
    config: {
      ...DEFAULTS,
      model: "scripted",
      ternHome,
      mode: "bypass",
      // No such profile: the sandbox refuses to open.
      profile: ":no-such-profile",
      profiles: {},
      rules: [],
    },
    provider: new ScriptedProvider([]),
    session,
    rules: [],
    emit: () => {},
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
  try {
    conversation.audit({
      v: 1,
      time: new Date().toISOString(),
      callId: "c1",
      tool: "read",
      args: { path: "a.txt" },
      profile: ":no-such-profile",
      mode: "bypass",
      decision: "allow",
      decidedBy: "bypass",
      sandbox: "in-process",
      status: "SUCCEEDED",
      durationMs: 1,
    });
    for (let i = 0; i < 200 && warnings.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    ok(warnings.length > 0, "a lost audit record is told");
    match(warnings[0], /audit record of a "read" call was not written: .+/);
  } finally {
    restore();
    await conversation.close().catch(() => {});
    session.close();
    await Deno.remove(root, { recursive: true });
  }
});
