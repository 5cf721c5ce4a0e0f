import { deepEqual, equal, ok, rejects, throws } from "node:assert/strict";
import type { Message } from "../../src/core/messages.ts";
import { summaryFromMessage } from "../../src/context/compaction.ts";
import { branchSummary, moveLeaf } from "../../src/session/branch.ts";
import { forkSession } from "../../src/session/fork.ts";
import { loadSession } from "../../src/session/load.ts";
import { replay } from "../../src/session/replay.ts";
import { Session } from "../../src/session/session.ts";

async function withHome(fn: (home: string) => Promise<void>) {
  const home = await Deno.makeTempDir({ prefix: "tern-replay-" });
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

const user = (content: string): Message => ({ role: "user", content });
const answer = (content: string): Message => ({ role: "assistant", content });
const contents = (session: Session) => session.state().items.map((item) => item.message.content);

Deno.test("Session replays messages, settings and permissions along the path to the leaf", async () => {
  await withHome(async (home) => {
    const session = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "model", model: "alpha" });
    session.append({ type: "mode", mode: "auto" });
    session.append({ type: "message", message: user("one") });
    session.append({
      type: "message",
      message: answer("done one"),
      usage: { inputTokens: 10, outputTokens: 2, cachedTokens: 1, reasoningTokens: 0 },
    });
    session.append({ type: "permission", change: { kind: "approval", key: "bash:touch" } });
    session.append({ type: "profile", profile: ":read-only" });
    session.append({ type: "model", model: "beta" });
    const state = session.state();
    deepEqual(contents(session), ["one", "done one"]);
    equal(state.model, "beta");
    equal(state.mode, "auto");
    equal(state.profile, ":read-only");
    deepEqual(state.permissions, [{ kind: "approval", key: "bash:touch" }]);
    equal(state.usage.inputTokens, 10);
    session.close();
    // The same state comes back from the file.
    const reopened = await Session.open(session.path);
    deepEqual(reopened.state(), state);
    reopened.close();
  });
});

Deno.test("replay() does not restore a fallback switch as the chosen model", async () => {
  await withHome(async (home) => {
    const session = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "model", model: "alpha", provider: "main" });
    session.append({ type: "message", message: user("one") });
    session.append({
      type: "model",
      model: "beta",
      provider: "backup",
      cause: "fallback",
      reason: "Rate limited",
    });
    session.append({ type: "message", message: answer("done one") });
    session.close();
    // Resuming from the file: the person's choice comes back, the fallback is only history.
    const reopened = await Session.open(session.path);
    const state = reopened.state();
    equal(state.model, "alpha");
    equal(state.provider, "main");
    deepEqual(state.fallbacks, ["backup/beta"]);
    // A later choice by the person still wins.
    reopened.append({ type: "model", model: "gamma", provider: "main" });
    equal(reopened.state().model, "gamma");
    reopened.close();
  });
});

Deno.test("replay() honours a compaction: summary first, then the kept entries and what followed", async () => {
  await withHome(async (home) => {
    const session = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    const ids = ["a", "b", "c", "d"].map((text, i) =>
      session.append({ type: "message", message: i % 2 ? answer(text) : user(text) }).id
    );
    session.append({
      type: "compaction",
      summary: "## Goal\nthe goal",
      firstKeptId: ids[2],
      tokensBefore: 100,
      tokensAfter: 40,
      summarised: ids.slice(0, 2),
      fallback: false,
    });
    session.append({ type: "message", message: user("e") });
    const items = session.state().items;
    equal(summaryFromMessage(items[0].message), "## Goal\nthe goal");
    deepEqual(items.slice(1).map((item) => item.message.content), ["c", "d", "e"]);
    equal(session.state().compactions, 1);
    // Compacting everything (firstKeptId null) keeps only the summary and what follows.
    session.append({
      type: "compaction",
      summary: "all of it",
      firstKeptId: null,
      tokensBefore: 60,
      tokensAfter: 10,
      summarised: [],
      fallback: true,
    });
    equal(session.state().items.length, 1);
    session.close();
  });
});

Deno.test("branchFrom() starts a branch without touching old lines; replay follows the new branch", async () => {
  await withHome(async (home) => {
    const session = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "message", message: user("first") });
    const firstAnswer = session.append({ type: "message", message: answer("answer 1") });
    session.append({ type: "message", message: user("second") });
    session.append({
      type: "message",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "write", arguments: '{"path":"notes.md"}' }],
      },
    });
    session.append({ type: "message", message: answer("answer 2") });
    const before = await Deno.readTextFile(session.path);
    const branch = moveLeaf(session, firstAnswer.id);
    equal(branch.parentId, firstAnswer.id);
    ok(branch.summary?.includes("Request: second"), branch.summary);
    ok(branch.summary?.includes("notes.md"), branch.summary);
    session.append({ type: "message", message: user("instead") });
    const after = await Deno.readTextFile(session.path);
    ok(after.startsWith(before), "old lines are unchanged");
    const texts = contents(session);
    deepEqual(texts.slice(0, 2), ["first", "answer 1"]);
    ok(texts[2].includes("another branch") && texts[2].includes("Request: second"), texts[2]);
    equal(texts[3], "instead");
    ok(!texts.includes("answer 2"));
    // The abandoned branch is still in the file and reachable by id.
    equal((await loadSession(session.path)).entries.length, 7);
    throws(() => session.branchFrom("nope"), /has no entry "nope"/);
    session.close();
  });
});

Deno.test("moveLeaf() names the files changed by edit as well as by write in the branch summary", async () => {
  await withHome(async (home) => {
    const session = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    const start = session.append({ type: "message", message: user("start") });
    session.append({ type: "message", message: user("fix both files") });
    session.append({
      type: "message",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "c1", name: "read", arguments: '{"path":"README.md"}' },
          {
            id: "c2",
            name: "edit",
            arguments: '{"path":"src/app.ts","old_string":"a","new_string":"b"}',
          },
          { id: "c3", name: "write", arguments: '{"path":"notes.md","content":"x"}' },
        ],
      },
    });
    session.append({ type: "message", message: answer("Fixed.") });
    const branch = moveLeaf(session, start.id);
    const lines = branch.summary?.split("\n") ?? [];
    ok(lines.includes("- Files written or edited: src/app.ts, notes.md"), branch.summary);
    ok(lines.includes("- Tool calls: 3"), branch.summary);
    ok(!branch.summary?.includes("README.md"), "a file only read is not a changed file");
    session.close();
  });
});

Deno.test("branchSummary() is undefined when no message was left behind", () => {
  equal(branchSummary([]), undefined);
});

Deno.test("forkSession() copies the path into a new session that records its parent", async () => {
  await withHome(async (home) => {
    const source = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    const first = source.append({ type: "message", message: user("keep me") });
    source.append({ type: "message", message: answer("and me") });
    source.branchFrom(first.id);
    source.append({ type: "message", message: user("other branch") });
    // A line from a newer version on the path survives the copy verbatim.
    await Deno.writeTextFile(
      source.path,
      JSON.stringify({
        type: "hologram",
        id: "feedbeef",
        parentId: source.leafId,
        timestamp: new Date().toISOString(),
        colour: "teal",
      }) + "\n",
      { append: true },
    );
    // The source stays locked by its writer: forking only reads it.
    const fork = await forkSession(home, source.path, { ternVersion: "t" });
    deepEqual(fork.header.parent, { id: source.id, path: source.path, leafId: "feedbeef" });
    deepEqual(contents(fork), ["keep me", "other branch"]);
    fork.close();
    const copied = (await Deno.readTextFile(fork.path)).trim().split("\n");
    equal(JSON.parse(copied.at(-1)!).colour, "teal");
    // Forking at an older entry copies only its path.
    const early = await forkSession(home, source.path, { entryId: first.id, ternVersion: "t" });
    deepEqual(contents(early), ["keep me"]);
    early.close();
    await rejects(
      forkSession(home, source.path, { entryId: "missing", ternVersion: "t" }),
      /has no entry "missing"/,
    );
    source.close();
  });
});

Deno.test("replay() skips entries of unknown type and labels", () => {
  const at = new Date().toISOString();
  const state = replay([
    { type: "message", id: "1", parentId: null, timestamp: at, message: user("hi") },
    { type: "unknown", id: "2", parentId: "1", timestamp: at, raw: { type: "x" } },
    { type: "label", id: "3", parentId: "2", timestamp: at, targetId: "1", label: "start" },
    { type: "message", id: "4", parentId: "3", timestamp: at, message: answer("hello") },
  ]);
  deepEqual(state.items.map((item) => item.id), ["1", "4"]);
});

Deno.test("replay() keeps the pins through a compaction, also when a resume reads from it", async () => {
  await withHome(async (home) => {
    const session = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "pins", pins: ["name the file first", "answer in French"] });
    const ids = ["a", "b", "c", "d"].map((text, i) =>
      session.append({ type: "message", message: i % 2 ? answer(text) : user(text) }).id
    );
    session.append({
      type: "compaction",
      summary: "## Goal\nthe goal",
      firstKeptId: ids[2],
      tokensBefore: 100,
      tokensAfter: 40,
      summarised: ids.slice(0, 2),
      fallback: false,
    });
    deepEqual(session.state().pins, ["name the file first", "answer in French"]);
    session.close();
    // A resume starts from the compaction's checkpoint: the pins are in it.
    const reopened = await Session.open(session.path);
    deepEqual(reopened.state().pins, ["name the file first", "answer in French"]);
    reopened.append({ type: "pins", pins: [] });
    equal(reopened.state().pins, undefined);
    reopened.close();
  });
});
