import { deepEqual, equal, ok, rejects, throws } from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { SessionChoiceError } from "../../src/harness/errors.ts";
import { Session } from "../../src/session/session.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

/** Runs `body` in a fresh workspace and tern home, with the process environment pointing there. */
async function withWorkspace(body: (ws: { dir: string; home: string }) => Promise<void>) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-harness-ws-" }));
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-harness-home-" }));
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

async function sessionFiles(home: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".jsonl")) files.push(path);
    }
  };
  await walk(`${home}/sessions`).catch(() => {});
  return files;
}

Deno.test("openAgentSession() throws SessionChoiceError and leaves no session for nothing to continue", async () => {
  await withWorkspace(async ({ dir, home }) => {
    await rejects(
      openAgentSession({
        workspace: dir,
        flags: { baseUrl: "http://127.0.0.1:9/v1", noSandbox: true },
        session: { continue: true },
        emit: () => {},
        warn: () => {},
      }),
      (error) => error instanceof SessionChoiceError && exitCodeForError(error) === 2,
    );
    deepEqual(await sessionFiles(home), []);
  });
});

Deno.test("AgentSession.close() closes the sandbox, then releases the session file", async () => {
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer(
      (_request, i) => i === 0 ? { text: "hello" } : { text: "again" },
      async (server) => {
        const events: string[] = [];
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, noSandbox: true, mode: "bypass" },
          emit: (event) => events.push(event.type),
          warn: () => {},
        });
        equal(agent.workspace, dir);
        equal(agent.session.header.cwd, dir);
        // The preload hook opens the sandbox before any turn.
        agent.preload();
        const sandbox = await agent.conversation.sandbox();
        ok(sandbox, "preload() opened no sandbox");
        const result = await agent.conversation.turn("say hello");
        equal(result.exitReason, "COMPLETED");
        ok(events.includes("turn_end"), events.join(" "));
        const path = agent.session.path;
        await agent.close();
        // Closed: the sandbox is gone and the session's lock is free for the next run.
        equal(agent.conversation.sandbox(), undefined);
        const again = await Session.open(path);
        try {
          ok(again.state().items.some((item) => item.message.content === "hello"));
        } finally {
          again.close();
        }
        await agent.close();
      },
    );
  });
});

Deno.test("AgentSession.close(signal) lets go of the signal once closed", async () => {
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer([{ text: "hello" }], async (server) => {
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true, mode: "bypass" },
        emit: () => {},
        warn: () => {},
      });
      // A front end's signal that lives on after the session: its listeners are counted.
      const signal = new AbortController().signal;
      const listening = new Set<unknown>();
      const add = signal.addEventListener.bind(signal);
      const remove = signal.removeEventListener.bind(signal);
      signal.addEventListener = (type: string, listener: unknown, options?: unknown) => {
        listening.add(listener);
        add(type, listener as EventListener, options as AddEventListenerOptions);
      };
      signal.removeEventListener = (type: string, listener: unknown, options?: unknown) => {
        listening.delete(listener);
        remove(type, listener as EventListener, options as EventListenerOptions);
      };
      await agent.close(signal);
      await agent.close(signal);
      equal(listening.size, 0, "the closed session still listens on the front end's signal");
    });
  });
});

Deno.test("openAgentSession() with connect later connects on the first need, and again after a failure", async () => {
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      const agent = await openAgentSession({
        workspace: dir,
        // An unknown provider: nothing fails until the models connect.
        flags: { baseUrl: server.baseUrl, noSandbox: true, provider: "nowhere" },
        connect: "later",
        emit: () => {},
        warn: () => {},
      });
      try {
        equal(agent.connected, false);
        throws(() => agent.conversation, /before the session connects/);
        await rejects(agent.connect(), /nowhere/);
        equal(agent.connected, false);
        // A setting that can be used: the next need connects.
        await agent.configure({ provider: undefined });
        const conversation = await agent.connect();
        equal(agent.connected, true);
        equal(await agent.connect(), conversation, "connect() made a second conversation");
        equal((await conversation.turn("hello")).exitReason, "COMPLETED");
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("AgentSession.preload() connects a session opened for later and opens its sandbox", async () => {
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true },
        connect: "later",
        emit: () => {},
        warn: () => {},
      });
      try {
        agent.preload();
        // preload() started the connection: connect() joins it.
        const conversation = await agent.connect();
        ok(await conversation.sandbox(), "preload() opened no sandbox");
        // No request went to the model: preloading is local.
        equal(server.requests.length, 0);
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("AgentSession.configure() refuses a model that cannot connect and changes nothing", async () => {
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true, mode: "bypass" },
        emit: () => {},
        warn: () => {},
      });
      try {
        const before = agent.config;
        await rejects(agent.configure({ provider: "nowhere", mode: "ask" }), /nowhere/);
        equal(agent.config, before);
        equal(agent.conversation.config.mode, "bypass");
        // A change that can be made reaches the conversation's next turn.
        const { reopens } = await agent.configure({ mode: "ask" });
        equal(reopens, true);
        equal(agent.conversation.config.mode, "ask");
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("AgentSession.switchSession() releases the old session and restores the new one's settings", async () => {
  await withWorkspace(async ({ dir, home }) => {
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      // A session that chose `ask` and `high` thinking.
      const other = Session.create(home, { cwd: dir, ternVersion: "test" });
      other.append({ type: "mode", mode: "ask" });
      other.append({ type: "thinking", level: "high" });
      const otherPath = other.path;
      other.close();
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true },
        emit: () => {},
        warn: () => {},
      });
      try {
        equal((await agent.conversation.turn("hello")).exitReason, "COMPLETED");
        const first = agent.session.path;
        const { note } = await agent.switchSession(await Session.open(otherPath));
        equal(note, undefined);
        equal(agent.session.path, otherPath);
        deepEqual([agent.config.mode, agent.config.thinking], ["ask", "high"]);
        equal(agent.conversation.session, agent.session);
        // The first session's lock is free: another writer can open it.
        const again = await Session.open(first);
        again.close();
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("Conversation.turn() starts the tool worker only for a file tool, as its name arrives before the call", async () => {
  await withWorkspace(async ({ dir }) => {
    await Deno.writeTextFile(`${dir}/a.txt`, "file content\n");
    const call = (i: number, name: string, args: unknown) => ({
      toolCalls: [{ id: `c${i}`, name, arguments: JSON.stringify(args) }],
    });
    let worker: { auditPath: string | null } | undefined;
    // The worker run each read call found when it started (null: none had started yet).
    const atCall: (string | null)[] = [];
    await withScriptedServer(
      (_request, i) =>
        i === 0
          ? call(i, "bash", { command: "echo from bash" })
          : i === 2
          ? call(i, "read", { path: "a.txt" })
          : { text: "done" },
      async (server) => {
        const agent = await openAgentSession({
          workspace: dir,
          flags: { baseUrl: server.baseUrl, noSandbox: true, mode: "bypass" },
          emit: (event) => {
            if (event.type === "tool_start" && event.name === "read") {
              atCall.push(worker?.auditPath ?? null);
            }
          },
          warn: () => {},
        });
        try {
          await agent.conversation.turn("run echo");
          worker = (await agent.conversation.sandbox())?.runtime.worker;
          equal(worker?.auditPath, null, "a bash-only turn started the worker");
          const second = await agent.conversation.turn("read it");
          ok(JSON.stringify(second.messages).includes("file content"));
          equal(atCall.length, 1);
          ok(atCall[0] !== null, "the worker started only with the read call");
        } finally {
          await agent.close();
        }
      },
      // The call's arguments come in pieces after its name: the name is the early sign.
      { chunkDelayMs: 40 },
    );
  });
});

Deno.test("AgentSession.switchSession() while the connection is being made: the conversation takes the new session's model", async () => {
  await withWorkspace(async ({ dir, home }) => {
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      const earlier = Session.create(home, { cwd: dir, ternVersion: "test" });
      earlier.append({ type: "model", model: "earlier-model" });
      const earlierPath = earlier.path;
      earlier.close();
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true, model: "scripted-model" },
        connect: "later",
        emit: () => {},
        warn: () => {},
      });
      try {
        const other = await Session.open(earlierPath);
        // The person resumes a session while the UI connects behind the prompt.
        const [conversation] = await Promise.all([agent.connect(), agent.switchSession(other)]);
        equal(agent.config.model, "earlier-model");
        equal(conversation.config.model, "earlier-model");
        equal(conversation.session, other);
        await conversation.turn("hello");
        equal(server.requests.at(-1)?.body.model, "earlier-model");
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("AgentSession.switchSession() before the connection: a session of the unnamed base-URL provider connects", async () => {
  await withWorkspace(async ({ dir, home }) => {
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      // What a run with --base-url and no provider name records.
      const earlier = Session.create(home, { cwd: dir, ternVersion: "test" });
      earlier.append({ type: "model", model: "earlier-model", provider: "openai-compatible" });
      const earlierPath = earlier.path;
      earlier.close();
      const agent = await openAgentSession({
        workspace: dir,
        flags: { baseUrl: server.baseUrl, noSandbox: true, model: "scripted-model" },
        connect: "later",
        emit: () => {},
        warn: () => {},
      });
      try {
        // Resumed first, connected at the first message (the line-mode order).
        const { note } = await agent.switchSession(await Session.open(earlierPath));
        equal(note, undefined);
        const conversation = await agent.connect();
        equal((await conversation.turn("hello")).exitReason, "COMPLETED");
        equal(server.requests.at(-1)?.body.model, "earlier-model");
      } finally {
        await agent.close();
      }
    });
  });
});
