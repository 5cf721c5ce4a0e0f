/** The seams front ends without a terminal use: TurnControl, AgentSession.fork(). */
import { equal, match, ok, rejects } from "node:assert/strict";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { MAX_QUEUED_STEERS, TurnBusyError, TurnControl } from "../../src/harness/turn_control.ts";
import { estimateTokens } from "../../src/context/tokens.ts";
import { Session } from "../../src/session/session.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

/** Runs `body` in a fresh workspace and tern home, with the process environment pointing there. */
async function withWorkspace(body: (ws: { dir: string; home: string }) => Promise<void>) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-turns-ws-" }));
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-turns-home-" }));
  const saved = ["TERN_HOME", "HOME", "TERN_API_KEY"].map((name) => [name, Deno.env.get(name)]);
  Deno.env.set("TERN_HOME", home);
  Deno.env.set("HOME", home);
  Deno.env.set("TERN_API_KEY", "sk-test");
  try {
    await body({ dir, home });
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name!);
      else Deno.env.set(name!, value);
    }
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("TurnControl runs one turn at a time, steers it at a boundary and aborts it", async () => {
  await withWorkspace(async ({ dir }) => {
    // Resolved at the third model request, the one that hangs.
    const { promise: hanging, resolve: hung } = Promise.withResolvers<void>();
    let requests = 0;
    await withScriptedServer((request, i) => {
      if (i === 0) return { toolCalls: [{ id: "c0", name: "list", arguments: "{}" }] };
      if (i === 1) {
        const said = request.messages.map((message) => message.content).join("\n");
        return { text: said.includes("STEER-MARK") ? "steered" : "not steered" };
      }
      if (i === 3) return { text: "after the cancel" };
      return { fault: "hang" };
    }, async (server) => {
      const turns = new TurnControl();
      let steered = false;
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true, mode: "bypass" },
        // The steering message goes in while the tool runs: the loop takes it after it.
        emit: (event) => {
          if (event.type === "tool_start") steered = turns.steer("STEER-MARK");
        },
        warn: () => {},
      });
      try {
        equal(turns.steer("nobody listens"), false);
        equal(turns.abort(), false);
        const first = await turns.run(agent.conversation, "look");
        ok(steered);
        equal(first.text, "steered");
        const second = turns.run(agent.conversation, "hang");
        equal(turns.running, true);
        await rejects(turns.run(agent.conversation, "again"), TurnBusyError);
        await hanging;
        equal(turns.abort(), true);
        // A client that cancels and at once sends the next message: it runs once the
        // cancelled turn has unwound, instead of being refused as busy.
        const next = turns.run(agent.conversation, "next");
        equal((await second).exitReason, "CANCELLED");
        equal((await next).text, "after the cancel");
        await turns.idle();
        equal(turns.running, false);
      } finally {
        await agent.close();
      }
    }, { onRequest: () => ++requests === 3 && hung() });
  });
});

Deno.test("AgentSession.fork() continues in a copy of the session linked to its parent", async () => {
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer((_request, i) => ({ text: `answer ${i}` }), async (server) => {
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true, mode: "bypass" },
        emit: () => {},
        warn: () => {},
      });
      try {
        await agent.conversation.turn("first");
        const parent = agent.session;
        const { session } = await agent.fork();
        equal(agent.session, session);
        equal(session.header.parent?.id, parent.id);
        equal(session.state().items.length, parent.state().items.length);
        await agent.conversation.turn("second");
        ok(session.entries.length > parent.entries.length, "the turn went to the fork");
        // The parent's file is released: another process may open it.
        (await Session.open(parent.path)).close();
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("TurnControl refuses a steering message the context window cannot hold, with the queue", async () => {
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer((request, i) => {
      if (i === 0) return { toolCalls: [{ id: "c0", name: "list", arguments: "{}" }] };
      const said = request.messages.map((message) => message.content).join("\n");
      return { text: `${said.length} characters` };
    }, async (server) => {
      const turns = new TurnControl();
      const outcomes: string[] = [];
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true, mode: "bypass" },
        emit: (event) => {
          if (event.type !== "tool_start") return;
          const { contextWindow } = agent.conversation.config;
          // Each alone fits; the two together do not: the second is refused, the first kept.
          const perChar = estimateTokens("h".repeat(10_000)) / 10_000;
          const half = "h".repeat(Math.floor(contextWindow * 0.6 / perChar));
          for (const text of ["huge ".repeat(contextWindow), half, half, "small STEER-MARK"]) {
            try {
              outcomes.push(String(turns.steer(text)));
            } catch (error) {
              outcomes.push((error as Error).message);
            }
          }
        },
        warn: () => {},
      });
      try {
        await turns.run(agent.conversation, "look");
        equal(outcomes.length, 4);
        match(
          outcomes[0],
          /^Cannot send a message of about \d+ tokens: the model's context window/,
        );
        equal(outcomes[1], "true");
        match(outcomes[2], /^Cannot send a message/);
        equal(outcomes[3], "true");
        // What was refused never reached the session: the next request holds one half only.
        const last = server.requests.at(-1)!.body.messages as { content: unknown }[];
        const text = JSON.stringify(last);
        ok(text.includes("STEER-MARK"));
        ok(!text.includes("huge huge"));
        // One half is 0.6 of the window; both would be 1.2.
        ok(
          estimateTokens(text) < agent.conversation.config.contextWindow,
          `${text.length} characters`,
        );
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("TurnControl queues at most MAX_QUEUED_STEERS messages for a running turn, saying why", async () => {
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer((request, i) => {
      if (i === 0) return { toolCalls: [{ id: "c0", name: "list", arguments: "{}" }] };
      const said = request.messages.map((message) => message.content).join("\n");
      return { text: `${said.split("STEER-").length - 1} steers` };
    }, async (server) => {
      const turns = new TurnControl();
      const outcomes: string[] = [];
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true, mode: "bypass" },
        emit: (event) => {
          if (event.type !== "tool_start") return;
          // A client's flood: each message checked with those before it took the square.
          for (let i = 0; i < MAX_QUEUED_STEERS + 50; i++) {
            try {
              outcomes.push(String(turns.steer(`STEER-${i}`)));
            } catch (error) {
              outcomes.push((error as Error).message);
            }
          }
        },
        warn: () => {},
      });
      try {
        const result = await turns.run(agent.conversation, "look");
        equal(outcomes.filter((outcome) => outcome === "true").length, MAX_QUEUED_STEERS);
        match(outcomes.at(-1)!, /^Cannot queue another message for the running turn: 100 wait/);
        equal(result.text, `${MAX_QUEUED_STEERS} steers`);
      } finally {
        await agent.close();
      }
    });
  });
});
