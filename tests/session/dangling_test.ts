import { deepEqual, equal } from "node:assert/strict";
import type { Message } from "../../src/core/messages.ts";
import { interruptedResult, isWellFormed } from "../../src/session/dangling.ts";
import { loadSession } from "../../src/session/load.ts";
import { replay } from "../../src/session/replay.ts";
import { Session } from "../../src/session/session.ts";
import { SessionTree } from "../../src/session/tree.ts";

async function withHome(fn: (home: string) => Promise<void>) {
  const home = await Deno.makeTempDir({ prefix: "tern-dangling-" });
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

const user = (content: string): Message => ({ role: "user", content });
const calls = (...ids: string[]): Message => ({
  role: "assistant",
  content: "",
  toolCalls: ids.map((id) => ({ id, name: "bash", arguments: `{"command":"echo ${id}"}` })),
});
const result = (id: string): Message => ({
  role: "tool",
  toolCallId: id,
  name: "bash",
  content: `SUCCEEDED\n${id}`,
});
const INTERRUPTED = "ERROR[CANCELLED]: interrupted: tern stopped before this call finished";

Deno.test("replay() closes a tool call without a result where it stands, in call order", async () => {
  await withHome(async (home) => {
    const session = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    for (
      const message of [user("go"), calls("a", "b", "c"), result("c"), result("a"), user("next")]
    ) {
      session.append({ type: "message", message });
    }
    const messages = session.state().items.map((item) => item.message);
    deepEqual(messages, [
      user("go"),
      calls("a", "b", "c"),
      result("a"),
      { role: "tool", toolCallId: "b", name: "bash", content: INTERRUPTED },
      result("c"),
      user("next"),
    ]);
    equal(isWellFormed(messages), true);
    session.close();
  });
});

Deno.test("replay() leaves out a second result for the same call and a result for no call", () => {
  const path = [user("go"), calls("a"), result("a"), result("a"), result("zz"), user("x")].map((
    message,
    i,
  ) => ({
    type: "message" as const,
    id: `e${i}`,
    parentId: i === 0 ? null : `e${i - 1}`,
    timestamp: "2026-01-01T00:00:00.000Z",
    message,
  }));
  const messages = replay(path).items.map((item) => item.message);
  deepEqual(messages, [user("go"), calls("a"), result("a"), user("x")]);
});

Deno.test("Session.open() records an interrupted result for each call left open at the leaf", async () => {
  await withHome(async (home) => {
    const first = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    first.append({ type: "message", message: user("go") });
    first.append({ type: "message", message: calls("a", "b") });
    first.append({ type: "message", message: result("a") });
    first.append({ type: "model", model: "m2", cause: "fallback" });
    first.close();

    const opened = await Session.open(first.path);
    opened.close();
    const loaded = await loadSession(first.path);
    const tail = loaded.entries.slice(-1);
    deepEqual(tail.map((entry) => entry.type === "message" && entry.message), [
      interruptedResult({ id: "b", name: "bash", arguments: "" }),
    ]);
    equal(
      isWellFormed(replay(new SessionTree(loaded.entries).path()).items.map((i) => i.message)),
      true,
    );

    // Once closed, opening again adds nothing.
    const again = await Session.open(first.path);
    again.close();
    equal((await loadSession(first.path)).entries.length, loaded.entries.length);
  });
});

Deno.test("isWellFormed() wants every call answered once, in order, before the next message", () => {
  equal(isWellFormed([user("a"), calls("x", "y"), result("x"), result("y"), user("b")]), true);
  equal(isWellFormed([user("a"), calls("x", "y"), result("y"), result("x")]), false);
  equal(isWellFormed([user("a"), calls("x"), user("b")]), false);
  equal(isWellFormed([user("a"), calls("x")]), false);
  equal(isWellFormed([user("a"), result("x")]), false);
});
