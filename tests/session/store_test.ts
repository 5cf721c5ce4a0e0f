import { deepEqual, equal, match, ok, rejects, throws } from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { basename, dirname, join } from "node:path";
import { TernError } from "../../src/core/errors.ts";
import { loadSession } from "../../src/session/load.ts";
import { encodeCwd, sessionFileName, sessionsRoot } from "../../src/session/paths.ts";
import { SessionWriter } from "../../src/session/store.ts";
import { SESSION_FORMAT_VERSION } from "../../src/session/types.ts";
import { Session } from "../../src/session/session.ts";
import { readLines, runFixture, spawnFixture, tempHome, userMessage } from "./_helpers.ts";

const CWD = "/work/project";

Deno.test("SessionWriter.create() writes the header in a private file under the cwd's folder", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const parent = {
      id: "0f0e0d0c-0000-4000-8000-000000000000",
      path: "/x.jsonl",
      leafId: "abcd1234",
    };
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0", parent });
    writer.close();
    const header = writer.header;
    match(header.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    deepEqual(header, {
      type: "session",
      version: SESSION_FORMAT_VERSION,
      id: header.id,
      cwd: CWD,
      created: header.created,
      ternVersion: "0.3.0",
      parent,
    });
    equal(dirname(writer.path), join(sessionsRoot(home), encodeCwd(CWD)));
    equal(basename(writer.path), sessionFileName(new Date(header.created), header.id));
    equal(await Deno.readTextFile(writer.path), `${JSON.stringify(header)}\n`);
    equal((await Deno.stat(writer.path)).mode! & 0o777, 0o600);
    equal((await Deno.stat(dirname(writer.path))).mode! & 0o777, 0o700);
    equal((await Deno.stat(sessionsRoot(home))).mode! & 0o777, 0o700);
    equal(writer.leafId, null);
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.append() chains entries under the leaf and they load back the same", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0" });
    const first = writer.append(userMessage("hello\nworld"));
    const second = writer.append({ type: "model", model: "m2", provider: "p" });
    const third = writer.append({
      type: "message",
      message: {
        role: "assistant",
        content: "hi",
        toolCalls: [{ id: "c1", name: "read", arguments: "{}" }],
      },
      usage: { inputTokens: 1, outputTokens: 2, cachedTokens: 0, reasoningTokens: 0 },
    });
    writer.close();
    equal(first.parentId, null);
    equal(second.parentId, first.id);
    equal(third.parentId, second.id);
    equal(writer.leafId, third.id);
    for (const entry of [first, second, third]) {
      match(entry.id, /^[0-9a-f]{8}$/);
      ok(!Number.isNaN(Date.parse(entry.timestamp)));
    }
    deepEqual(first, {
      type: "message",
      id: first.id,
      parentId: null,
      timestamp: first.timestamp,
      message: { role: "user", content: "hello\nworld" },
    });
    const loaded = await loadSession(writer.path);
    deepEqual(loaded.header, writer.header);
    deepEqual(loaded.entries, [first, second, third]);
    deepEqual(loaded.warnings, []);
    equal(loaded.endsWithNewline, true);
    equal((await Deno.readTextFile(writer.path)).split("\n").length, 5);
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.append() gives every entry of a session a distinct id", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0" });
    const ids = new Set<string>();
    for (let i = 0; i < 3000; i++) ids.add(writer.append({ type: "mode", mode: `m${i}` }).id);
    writer.close();
    equal(ids.size, 3000);
    const reopened = await SessionWriter.open(writer.path);
    reopened.writer.close();
    equal(new Set(reopened.loaded.entries.map((entry) => entry.id)).size, 3000);
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.append() branches under the parentId it is given", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0" });
    const a = writer.append(userMessage("a"));
    const b = writer.append(userMessage("b"));
    const branch = writer.append({ type: "branch", fromId: b.id }, { parentId: a.id });
    equal(branch.parentId, a.id);
    equal(writer.leafId, branch.id);
    const c = writer.append(userMessage("c"));
    equal(c.parentId, branch.id);
    const root = writer.append(userMessage("new root"), { parentId: null });
    equal(root.parentId, null);
    throws(
      () => writer.append(userMessage("x"), { parentId: "ffffffff" }),
      (error: unknown) => error instanceof RangeError && /no entry "ffffffff"/.test(error.message),
    );
    equal(writer.leafId, root.id);
    writer.close();
    const loaded = await loadSession(writer.path);
    deepEqual(loaded.entries.map((entry) => [entry.id, entry.parentId]), [
      [a.id, null],
      [b.id, a.id],
      [branch.id, a.id],
      [c.id, branch.id],
      [root.id, null],
    ]);
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.open() continues after the last entry of the file", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0" });
    const a = writer.append(userMessage("a"));
    const b = writer.append(userMessage("b"), { parentId: null });
    writer.close();
    const { writer: again, loaded } = await SessionWriter.open(writer.path);
    deepEqual(loaded.entries, [a, b]);
    deepEqual(again.header, writer.header);
    equal(again.path, writer.path);
    equal(again.leafId, b.id);
    const c = again.append(userMessage("c"));
    again.close();
    again.close();
    equal(c.parentId, b.id);
    deepEqual((await loadSession(writer.path)).entries, [a, b, c]);
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.appendRaw() copies entries verbatim and moves the leaf", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0" });
    const raw = { type: "hologram", id: "0000abcd", parentId: null, timestamp: "t", extra: [1] };
    writer.appendRaw(raw);
    equal(writer.leafId, "0000abcd");
    const next = writer.append(userMessage("after"));
    equal(next.parentId, "0000abcd");
    throws(() => writer.appendRaw(raw), RangeError);
    throws(() => writer.appendRaw({ type: "mode" }), TypeError);
    writer.close();
    throws(() => writer.append(userMessage("late")), /the writer is closed/);
    const lines = (await Deno.readTextFile(writer.path)).split("\n");
    equal(lines[1], JSON.stringify(raw));
    const loaded = await loadSession(writer.path);
    deepEqual(loaded.entries[0], {
      type: "unknown",
      id: "0000abcd",
      parentId: null,
      timestamp: "t",
      raw,
    });
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.open() fails with exit code 2 while another process holds the session", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0" });
    writer.append(userMessage("a"));
    const id = writer.header.id;
    const refused = await runFixture("lock_holder.ts", ["open", writer.path]);
    equal(refused.code, 2, refused.stderr);
    equal(
      refused.stderr.trim(),
      `Session "${id}" is in use by another tern process (${writer.path}): wait for it to ` +
        `finish, or fork it with \`tern sessions fork ${id}\``,
    );
    writer.close();
    const allowed = await runFixture("lock_holder.ts", ["open", writer.path]);
    equal(allowed.code, 0, allowed.stderr);
    equal(allowed.stdout, "opened\n");
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.open() fails for a second writer in the same process", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0" });
    await rejects(
      SessionWriter.open(writer.path),
      (error: unknown) =>
        error instanceof TernError && exitCodeForError(error) === 2 &&
        error.message.includes("is in use"),
    );
    writer.close();
    const { writer: first } = await SessionWriter.open(writer.path);
    await rejects(SessionWriter.open(writer.path), /is in use by another tern process/);
    first.close();
    const { writer: second } = await SessionWriter.open(writer.path);
    second.close();
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.open() takes the lock once its holder is killed with SIGKILL", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: CWD, ternVersion: "0.3.0" });
    writer.close();
    const holder = spawnFixture("lock_holder.ts", ["hold", writer.path]);
    const stderr = new Response(holder.stderr).text();
    let locked!: () => void;
    const lockedSeen = new Promise<void>((resolve) => locked = resolve);
    const stdout = readLines(holder.stdout, (line) => line === "locked" && locked());
    await Promise.race([lockedSeen, holder.status]);
    await rejects(SessionWriter.open(writer.path), /is in use by another tern process/);
    holder.kill("SIGKILL");
    const status = await holder.status;
    await stdout;
    await holder.stdin.close().catch(() => {});
    equal(status.signal, "SIGKILL", await stderr);
    const { writer: after } = await SessionWriter.open(writer.path);
    after.close();
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.open() names a missing file in a TernError", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const path = join(home, "nope.jsonl");
    await rejects(
      SessionWriter.open(path),
      (error: unknown) =>
        error instanceof TernError && exitCodeForError(error) === 2 &&
        error.message === `Cannot open session "${path}": file not found`,
    );
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter.create() rejects a relative cwd", async () => {
  const { home, cleanup } = await tempHome();
  try {
    throws(() => SessionWriter.create(home, { cwd: "rel/dir", ternVersion: "0" }), TypeError);
  } finally {
    await cleanup();
  }
});

Deno.test("SessionWriter writes every line as ASCII and non-ASCII text reads back unchanged", async () => {
  const home = await Deno.makeTempDir({ prefix: "tern-ascii-" });
  try {
    const session = await Session.create(home, { cwd: "/w", ternVersion: "t" });
    const text = "é — 日本語 😀 \u2028 end";
    session.append({ type: "message", message: { role: "user", content: text } });
    session.close();
    const bytes = await Deno.readFile(session.path);
    ok(bytes.every((byte) => byte < 0x80), "only ASCII bytes on disk");
    const reopened = await Session.open(session.path);
    equal(reopened.state().items[0].message.content, text);
    reopened.close();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
