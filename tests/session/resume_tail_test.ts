/**
 * Resuming from the end of a session file (src/session/tail.ts) and the state an open session
 * keeps: whatever was appended, branched or compacted, the state equals a replay of the whole
 * path read from the file, and what lies before the last compaction is not read.
 */
import { deepEqual, equal, notEqual, ok } from "node:assert/strict";
import type { Message, ToolCall } from "../../src/core/messages.ts";
import { latestPlan, replayPlan } from "../../src/plan/record.ts";
import { idIndexPath } from "../../src/session/id_index.ts";
import { loadSession } from "../../src/session/load.ts";
import { replay, type ReplayState } from "../../src/session/replay.ts";
import { Session } from "../../src/session/session.ts";
import { SessionTree } from "../../src/session/tree.ts";
import { loadTail } from "../../src/session/tail.ts";
import { findSession, listSessions } from "../../src/session/paths.ts";
import type { SessionEntry } from "../../src/session/types.ts";

async function withHome(fn: (home: string) => Promise<void>) {
  const home = await Deno.makeTempDir({ prefix: "tern-tail-" });
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** A small seeded generator, so a failing sequence can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const user = (content: string): Message => ({ role: "user", content });
const usage = { inputTokens: 7, outputTokens: 3, cachedTokens: 1, reasoningTokens: 0 };

/** The state at the leaf replayed from the whole file, as reading every line gives it. */
async function fullReplay(path: string): Promise<ReplayState> {
  const loaded = await loadSession(path);
  return replay(new SessionTree(loaded.entries).path());
}

/**
 * The same, with every compaction's checkpoint left out: settings then come from the entries
 * before it, so this shows that the checkpoints say what those entries say.
 */
async function replayWithoutCheckpoints(path: string): Promise<ReplayState> {
  const loaded = await loadSession(path);
  const entries = loaded.entries.map((entry) => {
    if (entry.type !== "compaction") return entry;
    const { checkpoint: _, ...rest } = entry;
    return rest as SessionEntry;
  });
  return replay(new SessionTree(entries).path());
}

/** A compaction entry as the context code writes it (Session adds the checkpoint). */
function compaction(firstKeptId: string | null) {
  return {
    type: "compaction" as const,
    summary: `summary kept from ${firstKeptId}`,
    firstKeptId,
    tokensBefore: 100,
    tokensAfter: 10,
    summarised: [],
    fallback: false,
  };
}

/** One random step on `session`: an entry of any kind, a branch, or a compaction. */
function step(session: Session, next: () => number, n: number): void {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const roll = next();
  if (roll < 0.3) {
    session.append({ type: "message", message: user(`request ${n}`) });
  } else if (roll < 0.5) {
    const calls: ToolCall[] = [{ id: `c${n}a`, name: "read", arguments: "{}" }];
    if (next() < 0.5) calls.push({ id: `c${n}b`, name: "bash", arguments: "{}" });
    session.append({
      type: "message",
      message: { role: "assistant", content: `answer ${n}`, toolCalls: calls },
      usage,
      ...(next() < 0.5 ? { cost: 0.25 } : {}),
    });
    // Sometimes a result is missing (killed mid-tool), sometimes one is repeated.
    for (const call of calls) {
      if (next() < 0.8) {
        session.append({
          type: "message",
          message: { role: "tool", toolCallId: call.id, name: call.name, content: `out ${n}` },
        });
      }
    }
  } else if (roll < 0.6) {
    const kind = pick(["model", "fallback", "thinking", "mode", "profile", "label"]);
    if (kind === "model") session.append({ type: "model", model: `m${n}`, provider: "p" });
    if (kind === "fallback") {
      session.append({ type: "model", model: `f${n}`, provider: "q", cause: "fallback" });
    }
    if (kind === "thinking") session.append({ type: "thinking", level: `t${n}` });
    if (kind === "mode") session.append({ type: "mode", mode: `mode${n}` });
    if (kind === "profile") session.append({ type: "profile", profile: `:p${n}` });
    if (kind === "label") session.append({ type: "label", targetId: session.leafId!, label: "x" });
  } else if (roll < 0.7) {
    session.append({ type: "permission", change: { kind: "approval", key: `bash:${n}` } });
  } else if (roll < 0.82) {
    // Kept from a recent message, from anywhere on the path, or nothing kept.
    const items = session.state().items;
    const path = session.entriesTo();
    // The first item is the summary of an earlier compaction, when there is one.
    const kept = next() < 0.6
      ? pick([items[0], ...items.slice(-3)])?.id ?? null
      : next() < 0.7
      ? pick(path).id
      : null;
    session.append(compaction(kept));
  } else if (roll < 0.92) {
    const entries = session.entries;
    const from = next() < 0.1 ? null : pick(entries.slice(-40)).id;
    session.branchFrom(from, next() < 0.5 ? `left ${n}` : undefined);
  } else {
    // A plan's start, a change of one of its nodes, or data that is neither.
    const kind = pick(["plan", "node", "note"]);
    const ids = ["n0", "n1", "n2"];
    const nodes = ids.map((id) => ({ id, title: id, task: id, dependsOn: [] }));
    const runs = Object.fromEntries(ids.map((id) => [id, { state: "WAITING" }]));
    const data = kind === "plan"
      ? { kind, plan: { id: `p${n % 2}`, task: `t${n}`, nodes, runs } }
      : kind === "node"
      ? { kind, planId: `p${n % 2}`, nodeId: `n${n % 3}`, run: { state: "RUNNING", n } }
      : { kind, n };
    session.append({ type: "plan", data });
  }
}

Deno.test("Session.state() after random appends, branches, compactions and resumes equals a replay of the whole file", async () => {
  await withHome(async (home) => {
    for (let seed = 1; seed <= 25; seed++) {
      const next = random(seed);
      let session = Session.create(home, { cwd: "/w", ternVersion: "t" });
      for (let n = 0; n < 80; n++) {
        step(session, next, n);
        if (next() < 0.08) {
          session.close();
          session = await Session.open(session.path);
        }
      }
      const kept = session.state();
      const path = session.path;
      session.close();
      const message = `seed ${seed}`;
      deepEqual(kept, await fullReplay(path), message);
      deepEqual(kept, await replayWithoutCheckpoints(path), message);
      const reopened = await Session.open(path);
      deepEqual(reopened.state(), await fullReplay(path), message);
      // The plan a resume continues, from the records the replay carried, is the whole path's.
      const wholePath = new SessionTree((await loadSession(path)).entries).path();
      deepEqual(latestPlan(reopened), replayPlan(wholePath), message);
      deepEqual(reopened.entries, (await loadSession(path)).entries, message);
      reopened.close();
    }
  });
});

Deno.test("Session.state() is not replayed again after appends: only opening and branching replay", async () => {
  await withHome(async (home) => {
    const replays: number[] = [];
    const session = Session.create(home, {
      cwd: "/w",
      ternVersion: "t",
      onReplay: (entries) => replays.push(entries),
    });
    deepEqual(replays, [0]);
    for (let n = 0; n < 200; n++) {
      session.append({ type: "message", message: user(`request ${n}`) });
      equal(session.state().items.length, n + 1);
    }
    deepEqual(replays, [0]);
    const first = session.entries[0].id;
    session.branchFrom(first);
    deepEqual(replays, [0, 2]);
    session.close();
    const counted: number[] = [];
    const reopened = await Session.open(session.path, { onReplay: (n) => counted.push(n) });
    reopened.state();
    reopened.append({ type: "message", message: user("again") });
    reopened.state();
    deepEqual(counted, [2]);
    reopened.close();
  });
});

/** A session of `before` messages, a compaction keeping the last of them, and 3 more. */
function compactedSession(home: string, before: number): string {
  const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
  session.append({ type: "model", model: "alpha", provider: "p" });
  session.append({ type: "permission", change: { kind: "approval", key: "bash:ls" } });
  let last = "";
  for (let n = 0; n < before; n++) {
    last = session.append({ type: "message", message: user(`old ${n}`), usage }).id;
  }
  session.append(compaction(last));
  for (let n = 0; n < 3; n++) session.append({ type: "message", message: user(`new ${n}`) });
  session.close();
  return session.path;
}

/** Overwrites the line of the `n`th entry (1-based, after the header) with as many "#" bytes. */
async function garbleEntryLine(path: string, n: number): Promise<void> {
  const text = await Deno.readTextFile(path);
  const lines = text.split("\n");
  lines[n] = "#".repeat(lines[n].length);
  await Deno.writeTextFile(path, lines.join("\n"));
}

Deno.test("Session.open() does not read the lines before the last compaction's kept entries", async () => {
  await withHome(async (home) => {
    const path = compactedSession(home, 50);
    const before = await fullReplay(path);
    // The 10th old message's line becomes garbage: a whole read skips it with a warning.
    await garbleEntryLine(path, 12);
    equal((await loadSession(path)).warnings.length, 1);
    const session = await Session.open(path);
    deepEqual(session.warnings, []);
    deepEqual(session.state(), before);
    equal(session.state().model, "alpha");
    deepEqual(session.state().permissions, [{ kind: "approval", key: "bash:ls" }]);
    equal(session.state().usage.inputTokens, 50 * usage.inputTokens);
    deepEqual(session.state().items.map((item) => item.message.content).slice(1), [
      "old 49",
      "new 0",
      "new 1",
      "new 2",
    ]);
    // Asking for every entry reads the rest.
    equal(session.entries.length, (await loadSession(path)).entries.length);
    session.close();
  });
});

/** Opens `path`, and says whether it read the whole file (it then sees the garbled line). */
async function readWhole(path: string): Promise<boolean> {
  const session = await Session.open(path);
  const whole = session.warnings.length > 0;
  deepEqual(session.state(), await fullReplay(path));
  session.close();
  return whole;
}

Deno.test("Session.open() reads the whole file when the id index is missing, corrupt, stale, another session's or a link, and writes it anew", async () => {
  await withHome(async (home) => {
    const path = compactedSession(home, 40);
    const other = compactedSession(home, 40);
    await garbleEntryLine(path, 5);
    const index = idIndexPath(path);
    const good = await Deno.readTextFile(index);
    equal(await readWhole(path), false);

    await Deno.remove(index);
    equal(await readWhole(path), true, "missing");
    equal(await readWhole(path), false, "written again after a whole read");

    await Deno.writeTextFile(index, "\u0000garbage{]\n12345678\n");
    equal(await readWhole(path), true, "corrupt");
    equal(await readWhole(path), false);

    await Deno.copyFile(idIndexPath(other), index);
    equal(await readWhole(path), true, "another session's");

    const head = JSON.parse(good.slice(0, good.indexOf("\n")));
    const stale = JSON.stringify({ ...head, size: 300 }) + good.slice(good.indexOf("\n"));
    await Deno.writeTextFile(index, stale);
    equal(await readWhole(path), true, "stale");

    // A link, even to a good index: a link could as well lead to a FIFO or a device.
    const elsewhere = `${home}/elsewhere.ids`;
    await Deno.writeTextFile(elsewhere, good);
    await Deno.remove(index);
    await Deno.symlink(elsewhere, index);
    equal(await readWhole(path), true, "a link");
    equal((await Deno.lstat(index)).isSymlink, false, "replaced by a file");
    equal(await readWhole(path), false);

    const beyond = JSON.stringify({ ...head, size: 1e9 }) + good.slice(good.indexOf("\n"));
    await Deno.writeTextFile(index, beyond);
    equal(await readWhole(path), true, "larger than the file");
    equal(await readWhole(path), false);
  });
});

Deno.test("Session.open() from the end keeps a hostile id index from changing the state or the ids", async () => {
  await withHome(async (home) => {
    const path = compactedSession(home, 40);
    const before = await fullReplay(path);
    const text = await Deno.readTextFile(idIndexPath(path));
    // Right session and size, but no ids: it is used, yet replay never reads it.
    await Deno.writeTextFile(idIndexPath(path), text.slice(0, text.indexOf("\n") + 1));
    const session = await Session.open(path);
    deepEqual(session.state(), before);
    const added = session.append({ type: "message", message: user("after") });
    session.close();
    const loaded = await loadSession(path);
    equal(loaded.entries.filter((entry) => entry.id === added.id).length, 1);
    equal(new SessionTree(loaded.entries).warnings.length, 0);
    deepEqual((await fullReplay(path)).items.at(-1)?.message, user("after"));
  });
});

Deno.test("Session.open() from the end skips a line cut off by kill -9 and closes its open calls", async () => {
  await withHome(async (home) => {
    const path = compactedSession(home, 30);
    const session = await Session.open(path);
    session.append({
      type: "message",
      message: {
        role: "assistant",
        content: "running",
        toolCalls: [{ id: "k1", name: "bash", arguments: "{}" }],
      },
    });
    session.close();
    // A tool result cut off mid-write.
    await Deno.writeTextFile(path, '{"type":"message","id":"abcd1234","parentId":', {
      append: true,
    });
    const resumed = await Session.open(path);
    equal(resumed.warnings.length, 1);
    ok(resumed.warnings[0].includes("not complete JSON"));
    const items = resumed.state().items;
    equal(items.at(-1)?.message.role, "tool");
    ok(String(items.at(-1)?.message.content).includes("interrupted"));
    resumed.append({ type: "message", message: user("go on") });
    resumed.close();
    deepEqual(await fullReplay(path), (await Session.open(path)).state());
    const loaded = await loadSession(path);
    equal(loaded.warnings.length, 1);
    equal(loaded.entries.at(-1)?.type, "message");
  });
});

Deno.test("Session.open() resolves a branch whose path crosses a compaction and one that goes around it", async () => {
  await withHome(async (home) => {
    const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "mode", mode: "plan" });
    const early = session.append({ type: "message", message: user("early") }).id;
    const kept = session.append({ type: "message", message: user("kept") }).id;
    session.append(compaction(kept));
    session.append({ type: "mode", mode: "auto" });
    const late = session.append({ type: "message", message: user("late") }).id;
    session.append({ type: "message", message: user("later") });
    // Back to an entry after the compaction: the path still goes through it.
    session.branchFrom(late, "left later");
    session.close();
    const across = await Session.open(session.path);
    deepEqual(across.state(), await fullReplay(session.path));
    equal(across.state().compactions, 1);
    equal(across.state().mode, "auto");
    // Back to an entry before it: the path no longer holds the compaction.
    across.branchFrom(early);
    across.close();
    const around = await Session.open(session.path);
    const state = around.state();
    deepEqual(state, await fullReplay(session.path));
    equal(state.compactions, 0);
    equal(state.mode, "plan");
    deepEqual(state.items.map((item) => item.message.content), ["early"]);
    notEqual(around.leafId, null);
    around.close();
  });
});

Deno.test("Session.open() replays a compaction that keeps an earlier compaction's summary and what that kept", async () => {
  await withHome(async (home) => {
    const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "message", message: user("a") });
    const b = session.append({ type: "message", message: user("b") }).id;
    const first = session.append(compaction(b)).id;
    session.append({ type: "message", message: user("c") });
    session.append(compaction(first));
    session.append({ type: "message", message: user("d") });
    session.close();
    const resumed = await Session.open(session.path);
    const state = resumed.state();
    deepEqual(state, await fullReplay(session.path));
    deepEqual(state.items.slice(2).map((item) => item.message.content), ["b", "c", "d"]);
    equal(state.compactions, 2);
    resumed.close();
  });
});

Deno.test("loadTail() reads the same lines whatever the size of the chunks it reads back in", async () => {
  await withHome(async (home) => {
    const path = compactedSession(home, 20);
    await Deno.writeTextFile(path, '{"type":"message","id":"torn"', { append: true });
    const whole = await loadSession(path);
    for (const chunkSize of [1, 2, 7, 64, 1000, 1 << 20]) {
      const tail = loadTail(path, { chunkSize });
      deepEqual(tail.entries, whole.entries.slice(-tail.entries.length), `chunk ${chunkSize}`);
      equal(tail.entries.length, 5, `chunk ${chunkSize}`);
      equal(tail.warnings.length, 1);
      equal(tail.endsWithNewline, false);
      deepEqual(tail.header, whole.header);
    }
  });
});

Deno.test("listSessions() and findSession() see a compacted session once, not its id index", async () => {
  await withHome(async (home) => {
    const path = compactedSession(home, 5);
    ok((await Deno.stat(idIndexPath(path))).isFile);
    const listed = await listSessions(home);
    deepEqual(listed.map((info) => info.path), [path]);
    equal(await findSession(home, listed[0].id.slice(0, 6), "/w"), path);
  });
});

/** A compacted session whose old lines hold a `subagent` entry; `told` sets the compaction's word on it. */
function sessionWithOldSubagent(home: string, told?: boolean): string {
  const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
  session.append({ type: "subagent", data: { kind: "spawn", runId: "r1" } });
  let last = "";
  for (let n = 0; n < 5; n++) {
    last = session.append({ type: "message", message: user(`old ${n}`) }).id;
  }
  session.append(
    told === undefined ? compaction(last) : { ...compaction(last), subagentsBefore: told },
  );
  session.append({ type: "message", message: user("new 0") });
  session.close();
  return session.path;
}

Deno.test("a compaction records whether a subagent entry came before it, on any branch", async () => {
  await withHome(async (home) => {
    const none = (await loadSession(compactedSession(home, 5))).entries;
    deepEqual(none.filter((e) => e.type === "compaction").map((e) => e.subagentsBefore), [false]);
    const some = (await loadSession(sessionWithOldSubagent(home))).entries;
    deepEqual(some.filter((e) => e.type === "compaction").map((e) => e.subagentsBefore), [true]);
    // A subagent entry on a branch the leaf left still counts: the mailbox reads every branch.
    const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
    const root = session.append({ type: "message", message: user("a") });
    session.append({ type: "subagent", data: { kind: "spawn", runId: "r2" } });
    session.branchFrom(root.id);
    equal(session.append(compaction(root.id)).type === "compaction", true);
    const written = session.entries.filter((e) => e.type === "compaction");
    deepEqual(written.map((e) => e.type === "compaction" && e.subagentsBefore), [true]);
    session.close();
  });
});

Deno.test("Session.hasSubagentEntries() after a resume reads no line before the compaction when it says none came before", async () => {
  await withHome(async (home) => {
    // The compaction's word is taken without reading the old lines: here it is false, and the
    // old lines do hold one, which only a read would find.
    const lying = await Session.open(sessionWithOldSubagent(home, false));
    equal(lying.hasSubagentEntries(), false);
    equal(lying.entries.length, 8);
    equal(lying.hasSubagentEntries(), true, "once read, the old lines count");
    lying.close();
    // Written by this version: it says one came before.
    const told = await Session.open(sessionWithOldSubagent(home));
    equal(told.hasSubagentEntries(), true);
    told.close();
    // A file written before compactions said so: the old lines are read to find out.
    const path = sessionWithOldSubagent(home);
    const text = await Deno.readTextFile(path);
    ok(text.includes('"subagentsBefore":true'));
    // The same length, so the id index still covers the file and the resume reads from the end.
    await Deno.writeTextFile(
      path,
      text.replace('"subagentsBefore":true', '"subagentsXefore":true'),
    );
    const oldUnread = await Session.open(path);
    equal(oldUnread.hasSubagentEntries(), true);
    oldUnread.close();
    // Nothing to find: no read needed either way.
    const clean = await Session.open(compactedSession(home, 5));
    equal(clean.hasSubagentEntries(), false);
    clean.close();
  });
});

Deno.test("Session.findOnPath() walks back from the leaf and reads older lines only when the walk reaches them", async () => {
  await withHome(async (home) => {
    const path = sessionWithOldSubagent(home, false);
    const session = await Session.open(path);
    const isUser = (e: SessionEntry) => e.type === "message" && e.message.role === "user";
    const latest = session.findOnPath(isUser);
    equal(latest?.type === "message" && latest.message.content, "new 0");
    // Not read yet: the compaction's false word still stands.
    equal(session.hasSubagentEntries(), false);
    const spawn = session.findOnPath((e) => e.type === "subagent");
    equal(spawn?.type, "subagent");
    equal(session.hasSubagentEntries(), true, "reaching the old lines read them");
    equal(session.findOnPath(() => false), undefined);
    session.close();
  });
});
