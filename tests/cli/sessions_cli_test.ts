/**
 * End-to-end: sessions written by real `tern run` processes against the scripted model server,
 * continued, resumed, branched, inspected, forked and compacted from the command line.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { Session } from "../../src/session/session.ts";
import { type RecordedRequest, startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

interface Bench {
  dir: string;
  home: string;
  requests: RecordedRequest[];
  tern(args: string[], env?: Record<string, string>): ReturnType<typeof runTern>;
}

/** One server (its script spans every run) and one workspace for a sequence of runs. */
async function withBench(
  script: (request: ModelRequest, index: number) => ScriptedReply,
  fn: (bench: Bench) => Promise<void>,
) {
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await fn({
      dir: ws.dir,
      home: ws.home,
      requests: server.requests,
      tern: (args, env = {}) =>
        runTern(args, {
          cwd: ws.dir,
          env: {
            TERN_HOME: ws.home,
            HOME: ws.home,
            TERN_API_KEY: "sk-test-sessions",
            TERN_BASE_URL: server.baseUrl,
            TERN_MODE: "bypass",
            ...env,
          },
        }),
    });
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

const said = (request: RecordedRequest) =>
  request.modelRequest.messages.map((m) => `${m.role}:${m.content}`);

function lastUser(request: ModelRequest): string {
  return request.messages.findLast((m) => m.role === "user")?.content ?? "";
}

/** Answers each task with "done: <task>". */
const echo = (request: ModelRequest): ScriptedReply => ({ text: `done: ${lastUser(request)}` });

Deno.test("tern run writes a session; --continue carries the conversation and the model", async () => {
  await withBench(echo, async ({ tern, requests, home }) => {
    const first = await tern(["run", "-o", "json", "-m", "alpha", "first task"]);
    equal(first.code, 0, first.stderr);
    const { session, sessionPath } = JSON.parse(first.stdout);
    match(session, /^[0-9a-f-]{36}$/);
    ok(sessionPath.startsWith(join(home, "sessions") + "/"), sessionPath);
    const lines = (await Deno.readTextFile(sessionPath)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    equal(lines[0].type, "session");
    deepEqual(lines.slice(1).map((l) => l.type), [
      "model",
      "thinking",
      "mode",
      "profile",
      "message",
      "message",
    ]);
    equal(lines[1].provider, "openai-compatible", "a base URL without a provider");
    equal(lines[2].level, "medium", "the default thinking level is recorded");
    equal(lines[5].message.content, "first task");
    equal(lines[6].message.content, "done: first task");
    ok(lines[6].usage.outputTokens > 0, "usage is recorded with the answer");
    equal(lines[6].model, "alpha", "the answer names the model that gave it");

    // No -m: the session's model comes back; the request holds the first turn.
    const second = await tern(["run", "-o", "json", "--continue", "second task"]);
    equal(second.code, 0, second.stderr);
    equal(JSON.parse(second.stdout).session, session);
    equal(requests[1].body.model, "alpha");
    deepEqual(said(requests[1]).slice(1), [
      "user:first task",
      "assistant:done: first task",
      "user:second task",
    ]);
    // An explicit -m wins and is recorded.
    const third = await tern(["run", "-c", "-m", "beta", "third task"]);
    equal(third.code, 0, third.stderr);
    equal(requests[2].body.model, "beta");
    const recorded = (await Deno.readTextFile(sessionPath)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    ok(recorded.some((e) => e.type === "model" && e.model === "beta"), "the change is an entry");

    const list = await tern(["sessions", "list"]);
    equal(list.code, 0, list.stderr);
    ok(list.stdout.startsWith(session.slice(0, 8)), list.stdout);
    ok(list.stdout.includes("first task"), list.stdout);
  });
});

Deno.test("tern run --resume <prefix> --from <entry> branches; tree, show, export and fork see it", async () => {
  await withBench(echo, async ({ tern, requests }) => {
    const first = await tern(["run", "-o", "json", "task one"]);
    const { session, sessionPath } = JSON.parse(first.stdout);
    await tern(["run", "-c", "task two"]);
    const entries = (await Deno.readTextFile(sessionPath)).trim().split("\n").slice(1).map((l) =>
      JSON.parse(l)
    );
    const answerOne = entries.find((e) => e.message?.content === "done: task one");
    const resumed = await tern([
      "run",
      "--resume",
      session.slice(0, 6),
      "--from",
      answerOne.id,
      "task three",
    ]);
    equal(resumed.code, 0, resumed.stderr);
    const seen = said(requests[2]);
    ok(seen.includes("assistant:done: task one"));
    ok(!seen.includes("assistant:done: task two"), "the other branch is not replayed");
    ok(seen.some((m) => m.includes("another branch") && m.includes("task two")), seen.join("\n"));

    const tree = await tern(["sessions", "tree", session]);
    equal(tree.code, 0, tree.stderr);
    match(tree.stdout, /branch from/);
    match(tree.stdout, /← leaf/);
    ok(tree.stdout.includes("task two") && tree.stdout.includes("task three"), tree.stdout);

    const show = await tern(["sessions", "show", session.slice(0, 8)]);
    equal(show.code, 0, show.stderr);
    match(show.stdout, /usage +\d+ input/);
    ok(show.stdout.includes("task three") && !show.stdout.includes("## User\n\ntask two"));

    const exported = await tern(["sessions", "export", session, "--json"]);
    const json = JSON.parse(exported.stdout);
    equal(json.header.id, session);
    equal(json.entries.length, entries.length + 3, "branch, user and answer were appended");
    const markdown = await tern(["sessions", "export", session]);
    match(markdown.stdout, /^# Session /);
    match(markdown.stdout, /## User\n\n {4}task three/);

    const fork = await tern(["sessions", "fork", session, answerOne.id]);
    equal(fork.code, 0, fork.stderr);
    const forkId = fork.stdout.trim();
    const forked = await tern(["run", "-o", "json", "-r", forkId, "task four"]);
    equal(forked.code, 0, forked.stderr);
    deepEqual(said(requests[3]).slice(1), [
      "user:task one",
      "assistant:done: task one",
      "user:task four",
    ]);
  });
});

Deno.test("tern sessions show|tree|export|compact -c take the newest session of the directory", async () => {
  await withBench(echo, async ({ tern }) => {
    const none = await tern(["sessions", "show", "-c"]);
    equal(none.code, 2);
    match(none.stderr, /no session in ".*" yet/);
    await tern(["run", "older task"]);
    const newest = JSON.parse((await tern(["run", "-o", "json", "newest task"])).stdout);
    const show = await tern(["sessions", "show", "-c"]);
    equal(show.code, 0, show.stderr);
    ok(show.stdout.includes(newest.session), show.stdout);
    ok(show.stdout.includes("newest task") && !show.stdout.includes("older task"));
    const tree = await tern(["sessions", "tree", "-c"]);
    equal(tree.code, 0, tree.stderr);
    ok(tree.stdout.includes("newest task"), tree.stdout);
    const exported = await tern(["sessions", "export", "-c", "--json"]);
    equal(JSON.parse(exported.stdout).header.id, newest.session);
    const both = await tern(["sessions", "show", "-c", newest.session]);
    equal(both.code, 2);
    match(both.stderr, /either a session or -c/);
  });
});

Deno.test("a session held by another process is refused with a clear error, and nothing is written", async () => {
  await withBench(echo, async ({ tern, requests }) => {
    const first = await tern(["run", "-o", "json", "hold me"]);
    const { sessionPath } = JSON.parse(first.stdout);
    const holder = await Session.open(sessionPath);
    try {
      const before = await Deno.readTextFile(sessionPath);
      const blocked = await tern(["run", "--continue", "again"]);
      equal(blocked.code, 2);
      match(blocked.stderr, /is in use by another tern process/);
      equal(await Deno.readTextFile(sessionPath), before);
      equal(requests.length, 1, "no model call was made");
    } finally {
      holder.close();
    }
    const after = await tern(["run", "--continue", "again"]);
    equal(after.code, 0, after.stderr);
  });
});

Deno.test("--continue, --resume and --from say clearly what is wrong", async () => {
  await withBench(echo, async ({ tern }) => {
    const nothing = await tern(["run", "--continue", "x"]);
    equal(nothing.code, 2);
    match(nothing.stderr, /no session to continue/);
    const unknown = await tern(["run", "--resume", "zzzz", "x"]);
    equal(unknown.code, 2);
    match(unknown.stderr, /No session matches "zzzz"/);
    const bare = await tern(["run", "x", "--resume"]);
    equal(bare.code, 2);
    match(bare.stderr, /--resume needs a session id/);
    const from = await tern(["run", "--from", "abcd1234", "x"]);
    equal(from.code, 2);
    match(from.stderr, /--from names an entry of an existing session/);
    // A run refused for its configuration leaves no (empty) session behind.
    const badProfile = await tern(["run", "-s", ":nope", "x"]);
    equal(badProfile.code, 2, badProfile.stderr);
    const list = await tern(["sessions", "list", "--json"]);
    deepEqual(JSON.parse(list.stdout), []);
  });
});

testWith(
  [bwrapNeed],
  "a long tool result is saved in the session folder and the model reads it with read",
  async () => {
    let savedPath = "";
    const script = (request: ModelRequest, index: number): ScriptedReply => {
      if (index === 0) {
        return { toolCalls: [{ id: "c0", name: "bash", arguments: '{"command":"seq 1 30000"}' }] };
      }
      if (index === 1) {
        const result = request.messages.at(-1)!.content;
        savedPath = /saved in "([^"]+)"/.exec(result)?.[1] ?? "";
        return {
          toolCalls: [{
            id: "c1",
            name: "read",
            arguments: JSON.stringify({ path: savedPath, offset: 15000, limit: 2 }),
          }],
        };
      }
      return { text: "read it" };
    };
    await withBench(script, async ({ tern, requests }) => {
      const run = await tern(["run", "-o", "json", "count"], { TERN_TOOL_RESULT_CHARS: "20000" });
      equal(run.code, 0, run.stderr);
      const { sessionPath } = JSON.parse(run.stdout);
      const preview = requests[1].modelRequest.messages.at(-1)!.content;
      ok(preview.length < 12_000, String(preview.length));
      ok(savedPath.startsWith(sessionPath.replace(/\.jsonl$/, "/tool-results/")), savedPath);
      const read = requests[2].modelRequest.messages.at(-1)!.content;
      match(read, /^SUCCEEDED/);
      match(read, /15000\t15000\n.*15001\t15001/s);
      // The session keeps what the model saw (the preview), not the whole output.
      ok(!(await Deno.readTextFile(sessionPath)).includes("\\n15000\\n"));
    });
  },
);

/** Run 1 reads a big output; run 2 (continued) starts over the threshold and compacts first. */
function compactingScript(summaryFault: boolean) {
  return (request: ModelRequest, index: number): ScriptedReply => {
    if (request.tools.length === 0) {
      return summaryFault ? { fault: "http500" } : {
        text: "## Goal\nSUMMARY-MARK count lines\n## Evidence\nseq ran\n## Changes\nnone\n" +
          "## Decisions\nnone\n## Failed paths\nnone\n## Open items\nnone",
      };
    }
    if (index < 3) {
      const command = JSON.stringify({ command: `seq ${index}001 ${index + 1}000` });
      return { toolCalls: [{ id: `c${index}`, name: "bash", arguments: command }] };
    }
    return { text: `done: ${lastUser(request)}` };
  };
}

const SMALL_WINDOW = { TERN_CONTEXT_WINDOW: "16000", TERN_COMPACT_AT: "0.5" };

testWith(
  [bwrapNeed],
  "a continued session over the threshold is compacted before the model call",
  async () => {
    await withBench(compactingScript(false), async ({ tern, requests, dir }) => {
      await Deno.writeTextFile(join(dir, "AGENTS.md"), "RULE-MARK: always run the tests.\n");
      // The first run fits the default window; the second runs with a small one.
      const first = await tern(["run", "-o", "json", "task one"]);
      equal(first.code, 0, first.stderr);
      const { sessionPath } = JSON.parse(first.stdout);
      equal(requests.length, 4, "no compaction while the turn fits");
      const second = await tern(["run", "-c", "task two"], SMALL_WINDOW);
      equal(second.code, 0, second.stderr);
      match(second.stderr, /compacted \d+ messages: \d+ → \d+ tokens, summary/);
      const summaryRequest = requests[4].modelRequest;
      equal(summaryRequest.tools.length, 0);
      ok(JSON.stringify(summaryRequest.messages).includes("task one"));
      const next = requests[5].modelRequest;
      ok(next.tools.length > 0);
      equal(next.messages[0].role, "system", "the system prompt is sent whole after compaction");
      ok(next.messages[0].content.includes("RULE-MARK: always run the tests."), "with the rules");
      ok(
        !JSON.stringify(summaryRequest.messages).includes("RULE-MARK"),
        "rules are not summarised",
      );
      ok(next.messages[1].content.includes("SUMMARY-MARK"), next.messages[1].content);
      equal(next.messages.at(-1)?.content, "task two");
      const entries = (await Deno.readTextFile(sessionPath)).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      const compaction = entries.find((e) => e.type === "compaction");
      ok(compaction, "the compaction is an entry");
      equal(compaction.fallback, false);
      ok(compaction.tokensAfter < compaction.tokensBefore, JSON.stringify(compaction));
      ok(compaction.summarisedCount > 0, JSON.stringify(compaction));
      equal(compaction.summarised, undefined, "no list of ids that grows with the history");
      // A third run replays the compacted context, not the old output.
      await tern(["run", "-c", "task three"], SMALL_WINDOW);
      const third = requests.at(-1)!.modelRequest.messages.map((m) => m.content).join("\n");
      ok(third.includes("SUMMARY-MARK"));
      ok(!third.includes("\n999\n"), "the summarised output is not sent again");
      ok(third.includes("\n2999\n"), "the recent output is kept whole");
    });
  },
);

testWith(
  [bwrapNeed],
  "when the summary call fails, a fallback summary is recorded and the turn goes on",
  async () => {
    await withBench(compactingScript(true), async ({ tern, requests }) => {
      const first = await tern(["run", "-o", "json", "task one"]);
      const { sessionPath } = JSON.parse(first.stdout);
      const second = await tern(["run", "-o", "json", "-c", "task two"], SMALL_WINDOW);
      equal(second.code, 0, second.stderr);
      equal(JSON.parse(second.stdout).text, "done: task two");
      const compaction = (await Deno.readTextFile(sessionPath)).trim().split("\n")
        .map((l) => JSON.parse(l)).find((e) => e.type === "compaction");
      equal(compaction.fallback, true);
      match(compaction.summary, /## Goal\n[^#]*task one[^#]*\n## Evidence\n[^#]*bash/);
      const next = requests.at(-1)!.modelRequest;
      ok(next.messages[1].content.includes("task one"));
    });
  },
);

testWith([bwrapNeed], "tern sessions compact summarises a session by hand", async () => {
  await withBench(compactingScript(false), async ({ tern }) => {
    const first = await tern(["run", "-o", "json", "task one"]);
    const { session } = JSON.parse(first.stdout);
    await tern(["run", "-c", "task two"]);
    await tern(["run", "-c", "task three"]);
    const compacted = await tern(["sessions", "compact", session, "--focus", "the counting"], {
      TERN_CONTEXT_WINDOW: "8000",
    });
    equal(compacted.code, 0, compacted.stderr);
    match(compacted.stdout, /compacted \d+ entries/);
    const shown = await tern(["sessions", "show", session]);
    match(shown.stdout, /compacted 1 time/);
  });
});

Deno.test("--continue restores the session's review mode and profile unless a flag overrides", async () => {
  const script = (request: ModelRequest): ScriptedReply => {
    const last = request.messages.at(-1)!;
    if (last.role === "user") {
      const write = JSON.stringify({ path: `${last.content}.txt`, content: "x" });
      return { toolCalls: [{ id: "w", name: "write", arguments: write }] };
    }
    return { text: last.content.split("\n")[0] };
  };
  await withBench(script, async ({ tern, dir }) => {
    const answer = async (args: string[]) =>
      JSON.parse((await tern(["run", "-o", "json", ...args])).stdout).text as string;
    // Run 1 sets ask mode on the command line (the environment says bypass).
    match(await answer(["--mode", "ask", "one"]), /^ERROR\[POLICY_DENIED\]/);
    // Run 2 has no flag: the session's ask mode wins over TERN_MODE=bypass.
    match(await answer(["-c", "two"]), /^ERROR\[POLICY_DENIED\]/);
    // An explicit flag wins over the session; the profile comes back the same way.
    match(await answer(["-c", "--mode", "bypass", "-s", ":read-only", "three"]), /DENIED/);
    match(await answer(["-c", "--mode", "bypass", "four"]), /DENIED/, "still :read-only");
    equal(await answer(["-c", "--mode", "bypass", "-s", ":workspace", "five"]), "SUCCEEDED");
    deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["five.txt"]);
  });
});

Deno.test("tern sessions fork -c <entry> forks the newest session at that entry", async () => {
  await withBench(echo, async ({ tern, requests }) => {
    const first = await tern(["run", "-o", "json", "task one"]);
    const { sessionPath } = JSON.parse(first.stdout);
    await tern(["run", "-c", "task two"]);
    const entries = (await Deno.readTextFile(sessionPath)).trim().split("\n").slice(1)
      .map((line) => JSON.parse(line));
    const answerOne = entries.find((e) => e.message?.content === "done: task one");
    const fork = await tern(["sessions", "fork", "-c", answerOne.id]);
    equal(fork.code, 0, fork.stderr);
    const forked = await tern(["run", "-r", fork.stdout.trim(), "task three"]);
    equal(forked.code, 0, forked.stderr);
    deepEqual(said(requests[2]).slice(1), [
      "user:task one",
      "assistant:done: task one",
      "user:task three",
    ]);
  });
});

Deno.test("tern plan -c with no session to continue says how to start one, naming no other command", async () => {
  await withBench(echo, async ({ tern, requests }) => {
    const plan = await tern(["plan", "-c"]);
    equal(plan.code, 2, plan.stderr);
    match(plan.stderr, /no session to continue in ".*" yet: leave out -c \(--continue\)/);
    equal(plan.stderr.includes("tern run"), false, plan.stderr);
    equal(requests.length, 0);
  });
});
