/**
 * Background memory consolidation through a real conversation (openAgentSession, real session
 * files, real topic files) against the scripted model server.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { consolidationLogPath, consolidations } from "../../src/harness/consolidation.ts";
import { CONSOLIDATION_SYSTEM_PROMPT } from "../../src/context/consolidate.ts";
import { estimateTokens } from "../../src/context/tokens.ts";
import { projectFactsPath } from "../../src/memory/facts.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { type RecordedRequest, withScriptedServer } from "../support/scripted_server.ts";

async function withWorkspace(body: (ws: { dir: string; home: string }) => Promise<void>) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-consol-ws-" }));
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-consol-home-" }));
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

const UNIT = "The build uses deno and the tests run in parallel. ";
/** An answer of about `tokens` tokens. */
function text(tokens: number): string {
  return UNIT.repeat(Math.ceil(tokens / (estimateTokens(UNIT.repeat(100)) / 100)));
}

const isConsolidation = (request: ModelRequest) =>
  request.messages[0]?.content === CONSOLIDATION_SYSTEM_PROMPT;
const consolidationRequests = (requests: RecordedRequest[]) =>
  requests.filter((request) => isConsolidation(request.modelRequest));

const FACTS = JSON.stringify({
  topics: [{
    topic: "testing",
    title: "Testing",
    facts: [{ fact: "Tests run in parallel", source: "deno.json" }],
  }],
});

/** Replies: each turn's answer from `answers` in order; consolidation requests get `reply`. */
function script(answers: string[], reply: () => ScriptedReply) {
  let turn = 0;
  return (request: ModelRequest): ScriptedReply =>
    isConsolidation(request) ? reply() : { text: answers[turn++] ?? "ok" };
}

async function open(dir: string, baseUrl: string) {
  return await openAgentSession({
    workspace: dir,
    flags: { baseUrl, noSandbox: true, mode: "bypass" },
    emit: () => {},
    warn: () => {},
    consolidation: "background",
  });
}

Deno.test("Conversation consolidates after 10,000 transcript tokens, then after 5,000 more", async () => {
  await withWorkspace(async ({ dir }) => {
    const answers = [text(6_000), text(5_000), text(3_000), text(3_000)];
    await withScriptedServer(script(answers, () => ({ text: FACTS })), async (server) => {
      const agent = await open(dir, server.baseUrl);
      try {
        const { conversation, session } = agent;
        await conversation.turn("one");
        await conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 0, "6,000 tokens: not yet");
        await conversation.turn("two");
        const point = session.leafId;
        await conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 1, "11,000 tokens: due");
        const [first] = consolidations(session.entries);
        deepEqual(
          { status: first.record.status, from: first.record.from, upTo: first.record.upTo },
          { status: "done", from: null, upTo: point },
        );
        equal(first.record.files?.[0].path, ".tern/memory/testing.md");
        equal(
          await Deno.readTextFile(join(dir, ".tern", "memory", "testing.md")),
          "# Testing\n- Tests run in parallel (source: deno.json)\n",
        );
        // The request carries the transcript since the start.
        match(consolidationRequests(server.requests)[0].modelRequest.messages[1].content, /two/);
        await conversation.turn("three");
        await conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 1, "3,000 more: not yet");
        await conversation.turn("four");
        await conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 2, "6,000 more: due");
        const second = consolidationRequests(server.requests)[1].modelRequest.messages[1].content;
        ok(!second.includes("[user]\none"), "only the transcript since the last point");
        match(second, /four/);
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("Conversation does not consolidate after a turn that saved a fact", async () => {
  await withWorkspace(async ({ dir, home }) => {
    let turn = 0;
    const serve = (request: ModelRequest): ScriptedReply => {
      if (isConsolidation(request)) return { text: FACTS };
      // `tern memory save` while the turn runs: the facts file changes.
      const facts = projectFactsPath(home, dir);
      Deno.mkdirSync(join(facts, ".."), { recursive: true });
      Deno.writeTextFileSync(facts, `{"id":"f${turn}","text":"x"}\n`, { append: true });
      turn++;
      return { text: text(11_000) };
    };
    await withScriptedServer(serve, async (server) => {
      const agent = await open(dir, server.baseUrl);
      try {
        await agent.conversation.turn("remember this");
        await agent.conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 0);
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("Conversation does not consolidate after a turn that followed a /save", async () => {
  await withWorkspace(async ({ dir, home }) => {
    const answers = [text(100), text(11_000), text(100)];
    await withScriptedServer(script(answers, () => ({ text: FACTS })), async (server) => {
      const agent = await open(dir, server.baseUrl);
      try {
        await agent.conversation.turn("one");
        // A /save between the turns: the next turn counts as one that wrote memory.
        const facts = projectFactsPath(home, dir);
        Deno.mkdirSync(join(facts, ".."), { recursive: true });
        Deno.writeTextFileSync(facts, '{"id":"f1","text":"x"}\n');
        await agent.conversation.turn("two");
        await agent.conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 0);
        await agent.conversation.turn("three");
        await agent.conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 1, "the turn after is due again");
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("Conversation does not consolidate after a turn that wrote MEMORY.md", async () => {
  await withWorkspace(async ({ dir }) => {
    const serve = (request: ModelRequest): ScriptedReply => {
      if (isConsolidation(request)) return { text: FACTS };
      // The model's write of MEMORY.md, as the write tool would make it.
      Deno.writeTextFileSync(join(dir, "MEMORY.md"), "# Memory\n- noted\n");
      return { text: text(11_000) };
    };
    await withScriptedServer(serve, async (server) => {
      const agent = await open(dir, server.baseUrl);
      try {
        await agent.conversation.turn("note it");
        await agent.conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 0);
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("a failing consolidation leaves the session and the memory folder untouched and is logged", async () => {
  await withWorkspace(async ({ dir, home }) => {
    const serve = script([text(11_000)], () => ({ fault: "http401" }));
    await withScriptedServer(serve, async (server) => {
      const agent = await open(dir, server.baseUrl);
      try {
        await agent.conversation.turn("one");
        const before = agent.session.entries.length;
        const file = await Deno.readTextFile(agent.session.path);
        await agent.conversation.consolidated();
        equal(consolidationRequests(server.requests).length, 1);
        equal(agent.session.entries.length, before);
        equal(await Deno.readTextFile(agent.session.path), file);
        equal(
          await Deno.lstat(join(dir, ".tern", "memory")).then(() => true, () => false),
          false,
        );
        match(await Deno.readTextFile(consolidationLogPath(home)), /consolidation failed/);
      } finally {
        await agent.close();
      }
    });
  });
});

Deno.test("the next turn runs while a consolidation is still waiting for the model", async () => {
  await withWorkspace(async ({ dir }) => {
    // The consolidation's model call never answers.
    const serve = script([text(11_000), "second answer"], () => ({ fault: "hang" }));
    await withScriptedServer(serve, async (server) => {
      const agent = await open(dir, server.baseUrl);
      let finished = false;
      try {
        await agent.conversation.turn("one");
        agent.conversation.consolidated().then(() => finished = true);
        // The consolidation's request is out (a real condition, not a pause).
        while (!server.requests.some((r) => isConsolidation(r.modelRequest))) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const second = await agent.conversation.turn("two");
        equal(second.text, "second answer");
        equal(finished, false, "the consolidation still runs");
        const kinds = server.requests.map((r) => isConsolidation(r.modelRequest) ? "c" : "t");
        deepEqual(kinds, ["t", "c", "t"]);
        deepEqual(consolidations(agent.session.entries), []);
      } finally {
        // Closing does not wait for it: it is stopped, and nothing is written.
        await agent.close();
      }
      deepEqual(consolidations(agent.session.entries), []);
    });
  });
});

Deno.test("a consolidation writes no key to a topic file, even one the reply's JSON escapes", async () => {
  const token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
  // `\u0041…`: the raw reply holds no token a mask could find; the parsed fact does.
  const escaped = token.replace("A", "\\u0041");
  const facts = JSON.stringify({
    topics: [{
      topic: "testing",
      title: "Testing",
      facts: [{ fact: `The CI token is TOKEN`, source: "ci.yml" }],
    }],
  }).replace("TOKEN", escaped);
  ok(!facts.includes(token));
  await withWorkspace(async ({ dir }) => {
    await withScriptedServer(
      script([text(6_000), text(5_000)], () => ({ text: facts })),
      async (server) => {
        const agent = await open(dir, server.baseUrl);
        try {
          await agent.conversation.turn("one");
          await agent.conversation.turn("two");
          await agent.conversation.consolidated();
          equal(consolidationRequests(server.requests).length, 1);
          const written = await Deno.readTextFile(join(dir, ".tern", "memory", "testing.md"));
          match(written, /The CI token is \[REDACTED/);
          ok(!written.includes(token.slice(4)), written);
        } finally {
          await agent.close();
        }
      },
    );
  });
});
