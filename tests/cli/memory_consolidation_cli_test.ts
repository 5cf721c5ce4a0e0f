/**
 * End-to-end: `tern run` leaves a due consolidation for the next start, an interactive
 * conversation's start does it, and `tern memory log` / `tern memory undo` show and undo it.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { consolidations, pendingFolder } from "../../src/harness/consolidation.ts";
import { CONSOLIDATION_SYSTEM_PROMPT } from "../../src/context/consolidate.ts";
import { loadSession } from "../../src/session/load.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const isConsolidation = (request: ModelRequest) =>
  request.messages[0]?.content === CONSOLIDATION_SYSTEM_PROMPT;

/** A model that answers at length, and with one "build" topic when asked to consolidate. */
function startModel() {
  const long = "The build uses deno and the tests run in parallel. ".repeat(1_000);
  const facts = JSON.stringify({
    topics: [{ topic: "build", title: "Build", facts: [{ fact: "Use deno", source: "x" }] }],
  });
  const script = (request: ModelRequest): ScriptedReply =>
    isConsolidation(request) ? { text: facts } : { text: long };
  return startScriptedServer(script, { chunkDelayMs: 0 });
}

/**
 * What the next interactive start does: one turn in `workspace`, then the due consolidation,
 * behind the prompt; in this process, with `env` set for it and put back after.
 */
async function consolidateHere(
  workspace: string,
  baseUrl: string | undefined,
  env: Record<string, string>,
): Promise<void> {
  const saved = Object.keys(env).map((name) => [name, Deno.env.get(name)] as const);
  for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
  try {
    const agent = await openAgentSession({
      workspace,
      flags: { ...(baseUrl === undefined ? {} : { baseUrl }), noSandbox: true, mode: "bypass" },
      emit: () => {},
      warn: () => {},
      consolidation: "background",
    });
    try {
      await agent.conversation.turn("hello");
      await agent.conversation.consolidated();
    } finally {
      await agent.close();
    }
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
}

testWith(
  [bwrapNeed],
  "tern run leaves a due consolidation for the next start; tern memory log and undo show and undo it",
  async () => {
    const server = await startModel();
    const ws = await tempWorkspace();
    const env = {
      TERN_HOME: ws.home,
      HOME: ws.home,
      TERN_API_KEY: "sk-test-consolidation",
      TERN_BASE_URL: server.baseUrl,
      TERN_MODE: "bypass",
    };
    const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
    try {
      const run = await tern(["run", "-o", "json", "explain the build"]);
      equal(run.code, 0, run.stderr);
      const { sessionPath } = JSON.parse(run.stdout);
      // tern run asked no consolidation: it marked one, in the session and in tern's home.
      equal(server.requests.filter((r) => isConsolidation(r.modelRequest)).length, 0);
      const marked = consolidations((await loadSession(sessionPath)).entries);
      deepEqual(marked.map((item) => item.record.status), ["pending"]);
      equal([...Deno.readDirSync(pendingFolder(ws.home))].length, 1);
      match((await tern(["memory", "log"])).stdout, /pending {2}session/);

      // The next interactive start does it behind the prompt, after its first turn.
      await consolidateHere(Deno.realPathSync(ws.dir), server.baseUrl, env);
      const topic = join(ws.dir, ".tern", "memory", "build.md");
      equal(await Deno.readTextFile(topic), "# Build\n- Use deno (source: x)\n");
      deepEqual([...Deno.readDirSync(pendingFolder(ws.home))], []);
      const done = consolidations((await loadSession(sessionPath)).entries);
      deepEqual(done.map((item) => item.record.status), ["pending", "done"]);

      const log = JSON.parse((await tern(["memory", "log", "--json"])).stdout);
      // The consolidation that wrote the files (it is recorded by the session that ran it; the
      // consolidated session gets a "done" mark without files, at the same time: either can be
      // listed first).
      const item = log.find((entry: { status: string; files: string[] }) =>
        entry.status === "done" && entry.files.length > 0
      );
      deepEqual(item.files, [".tern/memory/build.md"]);
      const undo = await tern(["memory", "undo", item.id]);
      equal(undo.code, 0, undo.stderr);
      match(undo.stdout, /restored \.tern\/memory\/build\.md/);
      ok(!(await Deno.lstat(topic).then(() => true, () => false)), "the new file is gone");
      match((await tern(["memory", "log"])).stdout, new RegExp(`${item.id} .* undone `));
      const again = await tern(["memory", "undo", item.id]);
      equal(again.code, 2);
      match(again.stderr, /it is undone, not done/);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);

testWith(
  [bwrapNeed],
  "tern memory undo changes .tern/memory in a workspace outside the temp folder",
  async () => {
    // tern's process may write its home and the temp folder; a workspace elsewhere (here
    // /var/tmp) needs its .tern/memory granted too, or every consolidation and undo failed there.
    const server = await startModel();
    const base = await Deno.stat("/var/tmp").then(() => "/var/tmp", () => undefined);
    const dir = await Deno.realPath(await Deno.makeTempDir({ dir: base, prefix: "tern-mem-ws-" }));
    const home = await Deno.realPath(await Deno.makeTempDir({ dir: base, prefix: "tern-mem-h-" }));
    const env = {
      TERN_HOME: home,
      HOME: home,
      TERN_API_KEY: "sk-test-consolidation",
      TERN_BASE_URL: server.baseUrl,
      TERN_MODE: "bypass",
    };
    try {
      const run = await runTern(["run", "-o", "json", "explain the build"], { cwd: dir, env });
      equal(run.code, 0, run.stderr);
      // The consolidation itself, in this process (as the first test does it)...
      await consolidateHere(dir, server.baseUrl, env);
      // ...then tern's own process, with the launcher's permissions, undoes it there.
      const topic = join(dir, ".tern", "memory", "build.md");
      equal(await Deno.readTextFile(topic), "# Build\n- Use deno (source: x)\n");
      const log = JSON.parse(
        (await runTern(["memory", "log", "--json"], { cwd: dir, env })).stdout,
      );
      const item = log.find((entry: { status: string; files: string[] }) =>
        entry.status === "done" && entry.files.length > 0
      );
      const undo = await runTern(["memory", "undo", item.id], { cwd: dir, env });
      equal(undo.code, 0, undo.stderr);
      ok(!(await Deno.lstat(topic).then(() => true, () => false)), "the new file is gone");
    } finally {
      await server.close();
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(home, { recursive: true });
    }
  },
);

testWith(
  [bwrapNeed],
  "a consolidation tern run left is never sent to a model server a project's files chose",
  async () => {
    const mine = await startModel();
    const theirs = await startModel();
    const ws = await tempWorkspace();
    const env = {
      TERN_HOME: ws.home,
      HOME: ws.home,
      TERN_API_KEY: "sk-test-consolidation",
      TERN_MODE: "bypass",
    };
    try {
      const run = await runTern(["run", "--base-url", mine.baseUrl, "-o", "json", "PRIVATE-77ab"], {
        cwd: ws.dir,
        env,
      });
      equal(run.code, 0, run.stderr);
      equal([...Deno.readDirSync(pendingFolder(ws.home))].length, 1);
      // The repository (or a pull) now names a server of its own.
      await Deno.mkdir(join(ws.dir, ".tern"), { recursive: true });
      await Deno.writeTextFile(
        join(ws.dir, ".tern", "config.jsonc"),
        JSON.stringify({ baseUrl: theirs.baseUrl }),
      );
      await consolidateHere(Deno.realPathSync(ws.dir), undefined, env);
      ok(theirs.requests.length > 0, "the start used the project's server");
      const sent = JSON.stringify(theirs.requests.map((r) => r.modelRequest));
      ok(!sent.includes("PRIVATE-77ab"), "the earlier run's conversation stays with its server");
      // Left for a start with the person's own server.
      equal([...Deno.readDirSync(pendingFolder(ws.home))].length, 1);
    } finally {
      await mine.close();
      await theirs.close();
      await ws.cleanup();
    }
  },
);

Deno.test("a consolidation that quotes the key writes it masked into the topic file", async () => {
  const key = "sk-test-CONSOLIDATEDKEY-93b1";
  const long = "The deploy needs a token, and the tests run in parallel. ".repeat(1_000);
  const facts = JSON.stringify({
    topics: [{
      topic: "deploy",
      title: `Deploy ${key}`,
      facts: [{ fact: `the deploy token is ${key}`, source: "x" }],
    }],
  });
  const server = await startScriptedServer(
    (request: ModelRequest): ScriptedReply =>
      isConsolidation(request) ? { text: facts } : { text: long },
    { chunkDelayMs: 0 },
  );
  const ws = await tempWorkspace();
  try {
    const env = {
      TERN_HOME: ws.home,
      HOME: ws.home,
      TERN_API_KEY: key,
      TERN_BASE_URL: server.baseUrl,
      TERN_MODE: "bypass",
    };
    // A run leaves the consolidation due; the next start does it.
    const run = await runTern(["run", "-o", "json", "explain the deploy"], { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    await consolidateHere(ws.dir, server.baseUrl, env);
    const topic = await Deno.readTextFile(join(ws.dir, ".tern", "memory", "deploy.md"));
    ok(!topic.includes(key), topic);
    match(topic, /the deploy token is \[REDACTED\]/);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
