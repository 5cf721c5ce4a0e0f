/**
 * A compaction whose summary is cancelled while it streams writes nothing: not through
 * `AgentSession.compact()` (`/compact`, `tern rpc`'s compact), and not as the automatic
 * compaction of a turn that is cancelled (no fallback summary takes the cancelled one's place).
 * The session goes on after it. The model is a scripted server whose summary streams slowly.
 */
import { equal, ok, rejects } from "node:assert/strict";
import type { AgentEvent } from "../../src/core/events.ts";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";

/** About 6,000 tokens of a person's prompt. */
const PADDING = "lorem ipsum dolor sit amet ".repeat(900);
/** Each streamed chunk waits this long: the summary is still streaming when it is cancelled. */
const CHUNK_MS = 200;
const SUMMARY = [
  "## Goal",
  "The parts.",
  "## Progress",
  "Parts sent and noted.",
].join("\n").repeat(20);

/**
 * Runs `body` with an agent session in a fresh workspace and home, its model a scripted server
 * whose summary requests (those offering no tools) call `onSummary` once they arrive.
 */
async function withCompactingSession(
  compactAt: string,
  body: (
    agent: Awaited<ReturnType<typeof openAgentSession>>,
    summaries: { asked: (work: Promise<unknown>) => Promise<boolean>; events: AgentEvent[] },
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-compact-ws-" }));
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-compact-home-" }));
  const env = {
    TERN_HOME: home,
    HOME: home,
    TERN_API_KEY: "sk-test",
    TERN_CONTEXT_WINDOW: "40000",
    TERN_COMPACT_AT: compactAt,
  };
  const saved = Object.keys(env).map((name) => [name, Deno.env.get(name)] as const);
  for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
  let asked = Promise.withResolvers<void>();
  const script = (request: ModelRequest): ScriptedReply => {
    if (request.tools.length > 0) return { text: "noted" };
    asked.resolve();
    return { text: SUMMARY };
  };
  const server = await startScriptedServer(script, { chunkDelayMs: CHUNK_MS });
  const events: AgentEvent[] = [];
  try {
    const agent = await openAgentSession({
      workspace: dir,
      flags: { baseUrl: server.baseUrl, noSandbox: true },
      emit: (event) => events.push(event),
      warn: () => {},
    });
    try {
      // True once a summary was asked for while `work` ran; false when `work` ended first.
      const next = async (work: Promise<unknown>) => {
        const summarised = await Promise.race([
          asked.promise.then(() => true),
          work.then(() => false, () => false),
        ]);
        if (!summarised) return false;
        asked = Promise.withResolvers<void>();
        // Past the first chunks, before the last: the cancel comes mid-stream.
        await new Promise((resolve) => setTimeout(resolve, CHUNK_MS * 2.5));
        return true;
      };
      await body(agent, { asked: next, events });
    } finally {
      await agent.close();
    }
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
    await server.close();
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

/** The types of the entries in the session file at `path`. */
async function entryTypes(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path);
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line).type);
}

Deno.test("AgentSession.compact() cancelled mid-stream writes nothing and the session goes on", async () => {
  await withCompactingSession("0.95", async (agent, summaries) => {
    for (const part of [1, 2, 3, 4, 5, 6]) {
      equal((await agent.conversation.turn(`part ${part}: ${PADDING}`)).exitReason, "COMPLETED");
    }
    ok(!(await entryTypes(agent.session.path)).includes("compaction"), "compacted too early");
    const before = await Deno.readTextFile(agent.session.path);
    const cancel = new AbortController();
    const compacting = agent.compact({ signal: cancel.signal });
    ok(await summaries.asked(compacting), "no summary was asked for");
    cancel.abort();
    await rejects(compacting, /Compaction cancelled: the session is unchanged/);
    equal(await Deno.readTextFile(agent.session.path), before, "the session log changed");
    ok(!summaries.events.some((event) => event.type === "compaction"), "a compaction was told");
    equal((await agent.conversation.turn("go on")).exitReason, "COMPLETED");
    ok(!(await entryTypes(agent.session.path)).includes("compaction"));
  });
});

Deno.test("Conversation.turn() cancelled in its automatic compaction writes no summary, and the next turn works", async () => {
  // Every request is over the threshold: a turn compacts once there is enough to summarise.
  await withCompactingSession("0.1", async (agent, summaries) => {
    let cancelled: Awaited<ReturnType<typeof agent.conversation.turn>> | undefined;
    for (let part = 1; part <= 8 && cancelled === undefined; part++) {
      const cancel = new AbortController();
      const turn = agent.conversation.turn(`part ${part}: ${PADDING}`, { signal: cancel.signal });
      if (!(await summaries.asked(turn))) {
        equal((await turn).exitReason, "COMPLETED");
        continue;
      }
      cancel.abort();
      cancelled = await turn;
    }
    equal(cancelled?.exitReason, "CANCELLED", "no turn compacted");
    ok(!(await entryTypes(agent.session.path)).includes("compaction"), "a summary was written");
    ok(!summaries.events.some((event) => event.type === "compaction"), "a compaction was told");
    // The next turn compacts (its summary streams to the end) and is answered.
    equal((await agent.conversation.turn("go on")).exitReason, "COMPLETED");
    const types = await entryTypes(agent.session.path);
    equal(types.filter((type) => type === "compaction").length, 1, types.join(", "));
  });
});
