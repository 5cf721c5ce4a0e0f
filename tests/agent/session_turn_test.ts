/** compactionHook(): when it estimates the request, and that skipping the estimate is safe. */
import { deepEqual, equal } from "node:assert/strict";
import { compactionHook, compactionSettings } from "../../src/agent/session_turn.ts";
import { chooseCut } from "../../src/context/compaction.ts";
import type { Message } from "../../src/core/messages.ts";
import type { Provider, ToolSpec } from "../../src/llm/types.ts";
import { Session } from "../../src/session/session.ts";

const HUGE = "word ".repeat(20_000);

Deno.test("compactionHook() makes no estimate and no compaction for a new session's first request, however large", async () => {
  const home = await Deno.makeTempDir({ prefix: "tern-home-" });
  try {
    const session = Session.create(home, { cwd: "/project", ternVersion: "test" });
    const task: Message = { role: "user", content: HUGE };
    session.append({ type: "message", message: task });
    const asked: string[] = [];
    // A window far below the task: any estimate would find it over the threshold.
    const settings = compactionSettings(1_000, 0.5);
    const hook = compactionHook(session, {
      provider: { name: "unused" } as unknown as Provider,
      model: "unused",
      settings,
      beforeCompact: () => {
        asked.push("beforeCompact");
        return Promise.resolve();
      },
      tools: () => {
        asked.push("tools");
        return [] as ToolSpec[];
      },
    });
    const system: Message = { role: "system", content: "You are tern." };
    const signal = new AbortController().signal;
    equal(await hook([system, task], signal), undefined);
    deepEqual(asked, []);
    // What the hook skips could not have compacted anything: no cut of the task alone.
    equal(chooseCut(session.state().items, settings), 0);
    // With an answer in the context, the request is estimated again (and found too large).
    session.append({ type: "message", message: { role: "assistant", content: "ok" } });
    const next: Message = { role: "user", content: "more" };
    session.append({ type: "message", message: next });
    await hook([system, task, { role: "assistant", content: "ok" }, next], signal).catch(() => {});
    deepEqual(asked.slice(0, 2), ["tools", "beforeCompact"]);
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
