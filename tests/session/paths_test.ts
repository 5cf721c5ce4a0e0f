import { deepEqual, equal, match, notEqual, ok, rejects } from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { join } from "node:path";
import { TernError } from "../../src/core/errors.ts";
import {
  encodeCwd,
  findSession,
  latestSession,
  listSessions,
  sessionFileName,
  sessionFolder,
  sessionsRoot,
} from "../../src/session/paths.ts";
import { SessionWriter } from "../../src/session/store.ts";
import { tempHome, userMessage } from "./_helpers.ts";

/** Writes a session file by hand: a header with `created` and `id`, then `entries`. */
async function writeSession(
  home: string,
  options: { cwd: string; id: string; created: string; headerCwd?: string; parentId?: string },
  entries: Record<string, unknown>[] = [],
): Promise<string> {
  const folder = sessionFolder(home, options.cwd);
  await Deno.mkdir(folder, { recursive: true });
  const path = join(folder, sessionFileName(new Date(options.created), options.id));
  const header: Record<string, unknown> = {
    type: "session",
    version: 1,
    id: options.id,
    cwd: options.headerCwd ?? options.cwd,
    created: options.created,
    ternVersion: "test",
  };
  if (options.parentId) header.parent = { id: options.parentId, path: "/p.jsonl", leafId: null };
  const lines = [header, ...entries].map((line) => JSON.stringify(line) + "\n");
  await Deno.writeTextFile(path, lines.join(""));
  return path;
}

function userEntry(id: string, content: string): Record<string, unknown> {
  return {
    type: "message",
    id,
    parentId: null,
    timestamp: "t",
    message: { role: "user", content },
  };
}

/** An id that starts with `prefix`, shaped like a UUID. */
function uuid(prefix: string): string {
  return (prefix + "0".repeat(8)).slice(0, 8) + "-1111-4222-8333-444444444444";
}

function isUsageError(message: string) {
  return (error: unknown) => {
    ok(error instanceof TernError, String(error));
    equal(exitCodeForError(error), 2);
    equal(error.message, message);
    return true;
  };
}

Deno.test("encodeCwd() is readable, stable and tells apart paths that read alike", () => {
  const ab = encodeCwd("/a/b");
  const aDashB = encodeCwd("/a-b");
  match(ab, /^a-b-[0-9a-f]{8}$/);
  match(aDashB, /^a-b-[0-9a-f]{8}$/);
  notEqual(ab, aDashB);
  equal(encodeCwd("/a/b"), ab);
  match(encodeCwd("/home/me/my proj/ü:x"), /^home-me-my-proj---x-[0-9a-f]{8}$/);
  const long = encodeCwd("/" + "d".repeat(200));
  equal(long.length, 80 + 9);
  notEqual(long, encodeCwd("/" + "d".repeat(201)));
  equal(sessionsRoot("/h"), "/h/sessions");
  equal(sessionFolder("/h", "/a/b"), `/h/sessions/${ab}`);
});

Deno.test("sessionFileName() puts the creation time first, made safe for file names", () => {
  equal(
    sessionFileName(new Date("2026-11-30T03:08:37.123Z"), "abc"),
    "2026-11-30T03-08-37-123Z_abc.jsonl",
  );
});

Deno.test("listSessions() lists newest first with counts, first user text and parents", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const long = "  Fix   the\nparser " + "x".repeat(200);
    const older = await writeSession(home, {
      cwd: "/p",
      id: uuid("aaaa"),
      created: "2026-11-30T01:00:00.000Z",
    }, [
      { type: "model", id: "m0000001", parentId: null, timestamp: "t", model: "m" },
      userEntry("u0000001", long),
      userEntry("u0000002", "second"),
    ]);
    const newer = await writeSession(home, {
      cwd: "/p",
      id: uuid("bbbb"),
      created: "2026-11-30T02:00:00.000Z",
      parentId: uuid("aaaa"),
    });
    const other = await writeSession(home, {
      cwd: "/q",
      id: uuid("cccc"),
      created: "2026-11-30T01:30:00.000Z",
    }, [userEntry("u0000003", "other"), { type: "future", id: "z0000001", timestamp: "t" }]);
    // Skipped: a file named like a session whose first line is not a header, and a stray file.
    await Deno.writeTextFile(
      join(sessionFolder(home, "/p"), sessionFileName(new Date(), uuid("dddd"))),
      "not json\n",
    );
    await Deno.writeTextFile(join(sessionFolder(home, "/p"), "notes.txt"), "hi\n");

    const all = await listSessions(home);
    deepEqual(all.map((info) => info.path), [newer, other, older]);
    const first = all[2];
    equal(first.id, uuid("aaaa"));
    equal(first.cwd, "/p");
    equal(first.created.toISOString(), "2026-11-30T01:00:00.000Z");
    equal(first.entries, 3);
    equal(first.firstUserText, ("Fix the parser " + "x".repeat(200)).slice(0, 100));
    ok(first.modified instanceof Date && first.modified.getTime() > 0);
    equal(first.parentId, undefined);
    equal(all[0].parentId, uuid("aaaa"));
    equal(all[0].entries, 0);
    equal(all[0].firstUserText, undefined);
    equal(all[1].entries, 2);
    equal(all[1].firstUserText, "other");

    deepEqual((await listSessions(home, { cwd: "/p" })).map((info) => info.path), [newer, older]);
    deepEqual(await listSessions(home, { cwd: "/nowhere" }), []);
    deepEqual(await listSessions(join(home, "no-home")), []);
  } finally {
    await cleanup();
  }
});

Deno.test("listSessions() counts the entries a SessionWriter wrote, long lines included", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/w", ternVersion: "test" });
    writer.append({
      type: "message",
      message: { role: "tool", toolCallId: "c", name: "read", content: "y".repeat(300_000) },
    });
    writer.append(userMessage("after a big output"));
    writer.append({
      type: "message",
      message: { role: "tool", toolCallId: "d", name: "read", content: "z".repeat(300_000) },
    });
    writer.close();
    const [info] = await listSessions(home, { cwd: "/w" });
    equal(info.id, writer.header.id);
    equal(info.entries, 3);
    equal(info.firstUserText, "after a big output");
  } finally {
    await cleanup();
  }
});

Deno.test("findSession() accepts a path, a full id or a unique prefix", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const here = await writeSession(home, {
      cwd: "/p",
      id: uuid("abcd1"),
      created: "2026-11-30T01:00:00.000Z",
    });
    const there = await writeSession(home, {
      cwd: "/q",
      id: uuid("abce2"),
      created: "2026-11-30T01:00:00.000Z",
    });
    equal(await findSession(home, here), here);
    equal(await findSession(home, uuid("abce2")), there);
    equal(await findSession(home, uuid("ABCE2").toUpperCase()), there);
    equal(await findSession(home, "abcd"), here);
    equal(await findSession(home, "abce", "/p"), there);
    // A file name alone is looked up by the id in it.
    equal(await findSession(home, there.split("/").at(-1)!), there);
  } finally {
    await cleanup();
  }
});

Deno.test("findSession() prefers the cwd's folder and lists every match when ambiguous", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const here = await writeSession(home, {
      cwd: "/p",
      id: uuid("feed1"),
      created: "2026-11-30T01:00:00.000Z",
    });
    const there = await writeSession(home, {
      cwd: "/q",
      id: uuid("feed2"),
      created: "2026-11-30T01:00:00.000Z",
    });
    equal(await findSession(home, "feed", "/p"), here);
    equal(await findSession(home, "feed", "/q"), there);
    const sorted = [[uuid("feed1"), here], [uuid("feed2"), there]];
    await rejects(
      findSession(home, "feed"),
      isUsageError(
        `Session reference "feed" is ambiguous: it matches 2 sessions:` +
          sorted.map(([id, path]) => `\n  ${id}  ${path}`).join(""),
      ),
    );
    await rejects(
      findSession(home, "feed", "/elsewhere"),
      (error: unknown) => error instanceof TernError && error.message.includes("is ambiguous"),
    );
  } finally {
    await cleanup();
  }
});

Deno.test("findSession() explains a reference that matches nothing", async () => {
  const { home, cleanup } = await tempHome();
  try {
    await writeSession(home, { cwd: "/p", id: uuid("abcd"), created: "2026-11-30T01:00:00.000Z" });
    await rejects(
      findSession(home, "beef", "/p"),
      isUsageError('No session matches "beef": run `tern sessions list` to see them'),
    );
    await rejects(
      findSession(home, "abc"),
      isUsageError('Session reference "abc" is too short: give at least 4 characters of the id'),
    );
    await rejects(
      findSession(home, "/no/such/file.jsonl"),
      isUsageError('Cannot open session "/no/such/file.jsonl": file not found'),
    );
    await rejects(
      findSession(join(home, "empty"), "abcd"),
      isUsageError('No session matches "abcd": run `tern sessions list` to see them'),
    );
  } finally {
    await cleanup();
  }
});

Deno.test("latestSession() picks the newest file of the cwd whose header names that cwd", async () => {
  const { home, cleanup } = await tempHome();
  try {
    equal(await latestSession(home, "/p"), undefined);
    const entry = [userEntry("e1", "hello")];
    await writeSession(
      home,
      { cwd: "/p", id: uuid("0001"), created: "2026-11-30T01:00:00.000Z" },
      entry,
    );
    const newest = await writeSession(home, {
      cwd: "/p",
      id: uuid("0002"),
      created: "2026-11-30T03:00:00.000Z",
    }, entry);
    await writeSession(
      home,
      { cwd: "/p", id: uuid("0003"), created: "2026-11-30T02:00:00.000Z" },
      entry,
    );
    await writeSession(home, {
      cwd: "/p",
      id: uuid("0004"),
      created: "2026-11-30T04:00:00.000Z",
      headerCwd: "/moved",
    }, entry);
    await writeSession(
      home,
      { cwd: "/q", id: uuid("0005"), created: "2026-11-30T05:00:00.000Z" },
      entry,
    );
    equal(await latestSession(home, "/p"), newest);
    equal(await latestSession(home, "/r"), undefined);
  } finally {
    await cleanup();
  }
});

Deno.test("listSessions() for a cwd leaves out a session in its folder whose header names another path", async () => {
  const { home, cleanup } = await tempHome();
  try {
    // The folder name's hash is 32 bits: another path can share the folder.
    const entry = [userEntry("e1", "hello")];
    await writeSession(
      home,
      { cwd: "/p", id: uuid("0001"), created: "2026-11-30T01:00:00.000Z" },
      entry,
    );
    await writeSession(home, {
      cwd: "/p",
      id: uuid("0002"),
      created: "2026-11-30T02:00:00.000Z",
      headerCwd: "/elsewhere",
    });
    deepEqual((await listSessions(home, { cwd: "/p" })).map((info) => info.id), [uuid("0001")]);
    equal((await listSessions(home)).length, 2, "every session is listed without a cwd");
  } finally {
    await cleanup();
  }
});

Deno.test("listSessions() gives a title whose blank glyphs are counted, not kept as a run", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/w", ternVersion: "test" });
    writer.append(userMessage("hello" + "\u2800".repeat(32) + "deadbeef  2026-12-06 06:40 fake"));
    writer.close();
    const [info] = await listSessions(home, { cwd: "/w" });
    equal(info.firstUserText, "hello⟨32 × U+2800⟩deadbeef 2026-12-06 06:40 fake");
  } finally {
    await cleanup();
  }
});
