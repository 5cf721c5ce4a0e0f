/**
 * A running child holds the permissions it was handed: when the session narrows them (a
 * narrower profile or mode, a rewind past a grant), when the person cancels the turn, and at
 * `/agents stop`, it is stopped, and its completion says so; a widening stops nothing.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { type AgentSession, openAgentSession } from "../../src/harness/agent_session.ts";
import { agentsCommand } from "../../src/cli/interactive/agents_command.ts";
import type { CommandContext } from "../../src/cli/interactive/commands.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { allText, call, firstUser, until } from "./_helpers.ts";

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");

interface Held {
  agent: AgentSession;
  dir: string;
  /** The turn's cancel (the parent waits for the child: the turn runs until it is cancelled). */
  abort: AbortController;
  turn: Promise<unknown>;
  /** Answers the child's held model request (a child still there would write then). */
  release: () => void;
}

/**
 * A parent session (AUTO, `:workspace`) whose turn spawned a child that may write, held at its
 * first model request; `before` runs on the session first. `body` gets it; then the child is
 * let go, and the test checks its write never landed when `stopped` is expected.
 */
async function withHeldChild(
  options: { wait: boolean; before?: (agent: AgentSession) => void },
  body: (held: Held) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-narrow-ws-" }));
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-narrow-home-" }));
  const saved = ["TERN_HOME", "HOME", "TERN_API_KEY"].map((name) => [name, Deno.env.get(name)]);
  Deno.env.set("TERN_HOME", home);
  Deno.env.set("HOME", home);
  Deno.env.set("TERN_API_KEY", "sk-test");
  const release = Promise.withResolvers<void>();
  let held = false;
  const script = (request: ModelRequest): ScriptedReply => {
    if (isChild(request)) {
      const done = request.messages.some((message) => message.role === "tool");
      return done
        ? { text: "child done" }
        : call("write", { path: "child.txt", content: "written\n" }, "c1");
    }
    const text = allText(request);
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", {
        task_name: "writer",
        message: "CHILD write a file",
        tools: ["write"],
      }, "s1");
    }
    return options.wait ? call("wait_agent", {}, `w${request.messages.length}`) : {
      text: "parent done",
    };
  };
  const server = await startScriptedServer(script, {
    chunkDelayMs: 0,
    beforeReply: async (request) => {
      if (!isChild(request) || request.messages.some((message) => message.role === "tool")) {
        return;
      }
      held = true;
      await release.promise;
    },
  });
  let agent: AgentSession | undefined;
  try {
    agent = await openAgentSession({
      workspace: dir,
      flags: {
        baseUrl: server.baseUrl,
        model: "scripted",
        noSandbox: true,
        mode: "auto",
        profile: ":workspace",
      },
      emit: () => {},
      warn: () => {},
      subagents: true,
    });
    options.before?.(agent);
    const abort = new AbortController();
    const turn = agent.conversation.turn("go", { signal: abort.signal }).catch((error) => error);
    await until(() => held, "the child's first model request");
    equal(agent.subagents!.running().length, 1);
    await body({ agent, dir, abort, turn, release: () => release.resolve() });
    abort.abort();
    await turn;
  } finally {
    release.resolve();
    await agent?.close();
    await server.close();
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name!);
      else Deno.env.set(name!, value);
    }
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

/** Waits for the only child to end; returns its completion's status and error. */
async function stoppedChild(held: Held): Promise<{ status: string; error: string }> {
  const host = held.agent.subagents!;
  const deadline = Date.now() + 30_000;
  while (host.running().length > 0) {
    if (Date.now() > deadline) throw new Error("Gave up waiting for the child to stop");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const [{ spawn }] = host.states();
  const completion = host.mailbox().completion(spawn.runId)!;
  return { status: completion.status, error: completion.error ?? "" };
}

/** The child's write did not land, even once its model request is answered. */
async function noWrite(held: Held): Promise<void> {
  held.release();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const exists = await Deno.stat(join(held.dir, "child.txt")).then(() => true, () => false);
  ok(!exists, "the stopped child wrote its file");
}

for (
  const [what, change] of [
    ["profile", { profile: ":read-only" }],
    ["mode", { mode: "ask" }],
  ] as const
) {
  Deno.test(`AgentSession.configure() stops a running child when the ${what} narrows`, async () => {
    await withHeldChild({ wait: false }, async (held) => {
      await held.turn;
      equal(held.agent.subagents!.running().length, 1);
      await held.agent.configure(change);
      const { status, error } = await stoppedChild(held);
      equal(status, "cancelled");
      match(error, /^stopped: the session's permissions narrowed/);
      await noWrite(held);
    });
  });
}

Deno.test("AgentSession.configure() leaves a running child alone when the mode widens", async () => {
  await withHeldChild({ wait: false }, async (held) => {
    await held.turn;
    await held.agent.configure({ mode: "bypass" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    equal(held.agent.subagents!.running().length, 1);
  });
});

Deno.test("AgentSession.switchSession() stops a child when a rewind drops a session grant", async () => {
  let before: string | null = null;
  await withHeldChild({
    wait: false,
    before: (agent) => {
      before = agent.session.leafId;
      agent.session.append({ type: "permission", change: { kind: "approval", key: "bash:ls" } });
    },
  }, async (held) => {
    await held.turn;
    const session = held.agent.session;
    session.branchFrom(before);
    await held.agent.switchSession(session);
    const { status, error } = await stoppedChild(held);
    equal(status, "cancelled");
    match(error, /^stopped: the session's permissions narrowed \(a session grant dropped\)/);
    await noWrite(held);
  });
});

Deno.test("Conversation.turn() stops the running children when its turn is cancelled", async () => {
  await withHeldChild({ wait: true }, async (held) => {
    // The parent waits in wait_agent; the person presses Esc (the turn's signal).
    held.abort.abort();
    await held.turn;
    const { status, error } = await stoppedChild(held);
    equal(status, "cancelled");
    match(error, /^stopped: the turn was cancelled/);
    await noWrite(held);
  });
});

Deno.test("/agents stop <id> stops a running child", async () => {
  await withHeldChild({ wait: false }, async (held) => {
    await held.turn;
    const [spawn] = held.agent.subagents!.running();
    const notices: string[] = [];
    const context = { notice: (text: string) => notices.push(text), print: () => {} };
    const command = agentsCommand(() => held.agent.subagents);
    await command.run(
      context as unknown as CommandContext,
      "stop nobody",
      new AbortController().signal,
    );
    match(notices[0], /No running subagent "nobody"/);
    await command.run(
      context as unknown as CommandContext,
      `stop ${spawn.agentId}`,
      new AbortController().signal,
    );
    match(notices[1], /Stopping writer/);
    const { status, error } = await stoppedChild(held);
    equal(status, "cancelled");
    match(error, /^stopped: the person asked/);
    await noWrite(held);
  });
});
