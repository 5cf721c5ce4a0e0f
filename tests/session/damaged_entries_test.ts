/**
 * Session files damaged in ways a torn write does not produce: entries of a known type whose
 * fields are missing or of the wrong type, parent links that form a cycle, and a storage that
 * refuses writes.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { Session } from "../../src/session/session.ts";
import { asSessionWriteError, SessionWriteError } from "../../src/session/errors.ts";
import { loadSession } from "../../src/session/load.ts";
import { SessionWriter } from "../../src/session/store.ts";
import { ancestors } from "../../src/session/tree.ts";
import { recentPath } from "../../src/harness/consolidation.ts";
import type { SessionEntry } from "../../src/session/types.ts";
import { tempHome, userMessage } from "./_helpers.ts";

const BASE = { parentId: null, timestamp: "2026-11-30T03:08:37.123Z" };

/** Entries of known types whose shape is wrong, by what is wrong with them. */
const MALFORMED: Record<string, Record<string, unknown>> = {
  "message without message": { type: "message" },
  "message with numeric content": { type: "message", message: { role: "user", content: 12345 } },
  "tool calls not a list": {
    type: "message",
    message: { role: "assistant", content: "", toolCalls: "notalist" },
  },
  "tool call without string fields": {
    type: "message",
    message: { role: "assistant", content: "", toolCalls: [{ id: null, name: 5 }] },
  },
  "unknown role": { type: "message", message: { role: "martian", content: "hi" } },
  "tool result without its call id": { type: "message", message: { role: "tool", content: "x" } },
  "usage not numbers": {
    type: "message",
    message: { role: "user", content: "x" },
    usage: { inputTokens: "many" },
  },
  "permission change a string": { type: "permission", change: "garbage" },
  "model an object": { type: "model", model: { a: 1 }, provider: 7 },
  "mode missing": { type: "mode" },
  "pins not a list": { type: "pins", pins: "notalist" },
  "label without target": { type: "label", label: { x: 1 }, targetId: 5 },
  "plan without data": { type: "plan", kind: "graph", graph: "x" },
  "subagent without data": { type: "subagent", kind: "spawn", childSessionId: "../../etc" },
  "consolidation data null": { type: "consolidation", data: null },
  "compaction summary an object": {
    type: "compaction",
    summary: { x: 1 },
    firstKeptId: 5,
    checkpoint: { permissions: "x" },
  },
  "branch without fromId": { type: "branch" },
};

Deno.test("loadSession() skips each malformed entry of a known type with a warning", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/shape", ternVersion: "test" });
    const good = writer.append(userMessage("kept"));
    writer.close();
    const lines = Object.values(MALFORMED).map((fields, i) =>
      JSON.stringify({ ...BASE, ...fields, id: `bad0000${i.toString(16)}`.slice(-8) })
    );
    await Deno.writeTextFile(writer.path, lines.join("\n") + "\n", { append: true });
    const loaded = await loadSession(writer.path);
    deepEqual(loaded.entries.map((entry) => entry.id), [good.id]);
    equal(loaded.warnings.length, lines.length, loaded.warnings.join("\n"));
    for (const [i, warning] of loaded.warnings.entries()) {
      match(warning, new RegExp(`^Skipped line ${i + 3} of ".*": a "\\w+" entry whose "\\w+"`));
    }
  } finally {
    await cleanup();
  }
});

Deno.test("loadSession() keeps well-formed entries of every known type", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/shape", ternVersion: "test" });
    const entries: SessionEntry[] = [
      writer.append(userMessage("a")),
      writer.append({
        type: "message",
        message: {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c1", name: "bash", arguments: "{}" }],
          thinking: [{ api: "anthropic", text: "t", signature: "s" }],
        },
        usage: { inputTokens: 1, outputTokens: 2, cachedTokens: 0, reasoningTokens: 0 },
        mailbox: ["run-1"],
      }),
      writer.append({
        type: "message",
        message: { role: "tool", toolCallId: "c1", name: "bash", content: "ok" },
      }),
      writer.append({ type: "model", model: "m", provider: "p", cause: "fallback" }),
      writer.append({ type: "thinking", level: "high" }),
      writer.append({ type: "mode", mode: "review" }),
      writer.append({ type: "profile", profile: ":workspace" }),
      writer.append({ type: "permission", change: { kind: "approval", key: "git status" } }),
      writer.append({
        type: "permission",
        change: {
          kind: "grant",
          extra: { read: [], write: ["/x"], net: [], env: [] },
          keys: [],
          withoutSandbox: false,
        },
      }),
      writer.append({ type: "pins", pins: ["be brief"] }),
      writer.append({ type: "plan", data: { kind: "plan" } }),
      writer.append({ type: "subagent", data: { kind: "spawn" } }),
      writer.append({ type: "consolidation", data: { status: "done" } }),
      writer.append({
        type: "compaction",
        summary: "s",
        firstKeptId: null,
        tokensBefore: 10,
        tokensAfter: 5,
        fallback: false,
      }),
      writer.append({ type: "branch", fromId: null, summary: "left" }),
    ];
    entries.push(writer.append({ type: "label", targetId: entries[0].id, label: "start" }));
    writer.close();
    const loaded = await loadSession(writer.path);
    deepEqual(loaded.warnings, []);
    deepEqual(loaded.entries, entries);
  } finally {
    await cleanup();
  }
});

/** `entries` linked in a line, then `relink` applied, as a get() over them. */
function chain(count: number, relink: (ids: string[]) => Record<string, string>) {
  const ids = Array.from({ length: count }, (_, i) => `e000000${i}`);
  const parents = relink(ids);
  const byId = new Map(ids.map((id, i) => [id, {
    type: "branch",
    id,
    parentId: parents[id] ?? ids[i - 1] ?? null,
    timestamp: BASE.timestamp,
    fromId: null,
  } as SessionEntry]));
  return { ids, get: (id: string) => byId.get(id) };
}

Deno.test("ancestors() stops at an entry that is its own parent and at a longer cycle", () => {
  const self = chain(4, (ids) => ({ [ids[3]]: ids[3] }));
  deepEqual([...ancestors(self.get, self.ids[3])].map((entry) => entry.id), [self.ids[3]]);
  const loop = chain(5, (ids) => ({ [ids[1]]: ids[4] }));
  deepEqual(
    [...ancestors(loop.get, loop.ids[4])].map((entry) => entry.id),
    [loop.ids[4], loop.ids[3], loop.ids[2], loop.ids[1]],
  );
  const missing = chain(3, (ids) => ({ [ids[1]]: "gone0000" }));
  equal([...ancestors(missing.get, missing.ids[2])].length, 2);
});

Deno.test("recentPath() ends on a session file whose parent links form a cycle", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/cycle", ternVersion: "test" });
    const entries = ["a", "b", "c", "d"].map((text) => writer.append(userMessage(text)));
    writer.close();
    const cycles: Array<[string, (lines: Record<string, unknown>[]) => void]> = [
      ["self", (lines) => lines[3].parentId = lines[3].id],
      ["longer", (lines) => lines[1].parentId = lines[3].id],
    ];
    const original = await Deno.readTextFile(writer.path);
    for (const [name, relink] of cycles) {
      const [header, ...rest] = original.trimEnd().split("\n");
      const lines = rest.map((line) => JSON.parse(line));
      relink(lines);
      await Deno.writeTextFile(
        writer.path,
        [header, ...lines.map((line) => JSON.stringify(line))].join("\n") + "\n",
      );
      const session = await Session.open(writer.path);
      try {
        const path = recentPath(session, session.leafId);
        ok(path.length <= entries.length, `${name}: ${path.length} entries`);
        equal(path.at(-1)?.id, entries[3].id, name);
      } finally {
        session.close();
      }
    }
  } finally {
    await cleanup();
  }
});

Deno.test("asSessionWriteError() names a full disk, a used-up quota and a read-only file system", () => {
  const cases: Array<[string, RegExp]> = [
    ["ENOSPC", /\(ENOSPC\): the disk is full: free some space/],
    ["EDQUOT", /\(EDQUOT\): the disk quota is used up/],
    ["EROFS", /\(EROFS\): the file system is read-only: set TERN_HOME/],
  ];
  for (const [code, message] of cases) {
    const cause = Object.assign(new Error("os error"), { code });
    const error = asSessionWriteError("/h/s.jsonl", cause);
    ok(error instanceof SessionWriteError, code);
    match(error.message, /^Cannot write session "\/h\/s.jsonl"/);
    match(error.message, message);
    equal(error.cause, cause);
  }
  const other = Object.assign(new Error("os error"), { code: "EIO" });
  equal(asSessionWriteError("/h/s.jsonl", other), other);
});

Deno.test("loadSession() reads a tool call saved with object arguments as JSON text, not a skip", async () => {
  // An earlier tern saved a Responses call's object arguments as they came: skipping the line
  // would cut the whole history before it off the path.
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/shape", ternVersion: "test" });
    const first = writer.append(userMessage("first"));
    writer.close();
    const call = {
      ...BASE,
      id: "call0001",
      parentId: first.id,
      type: "message",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "bash", arguments: { command: "ls" } }],
      },
    };
    await Deno.writeTextFile(writer.path, JSON.stringify(call) + "\n", { append: true });
    const loaded = await loadSession(writer.path);
    deepEqual(loaded.warnings, []);
    const last = loaded.entries.at(-1);
    ok(last?.type === "message" && last.message.role === "assistant");
    deepEqual(last.message.toolCalls?.[0].arguments, '{"command":"ls"}');
    deepEqual(loaded.entries.map((entry) => entry.id), [first.id, "call0001"]);
  } finally {
    await cleanup();
  }
});
