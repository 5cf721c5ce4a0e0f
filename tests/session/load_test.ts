import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { SessionFileError } from "../../src/session/errors.ts";
import { loadSession } from "../../src/session/load.ts";
import { SessionWriter } from "../../src/session/store.ts";
import { SessionTree } from "../../src/session/tree.ts";
import { tempHome, userMessage } from "./_helpers.ts";

const TORN_LINE = '{"type":"message","id":"dead0001","parentId":null,"timestamp":"2026-11-30T0';

/** A session with two entries, closed. */
async function twoEntrySession(home: string) {
  const writer = await SessionWriter.create(home, { cwd: "/load", ternVersion: "test" });
  const a = writer.append(userMessage("a"));
  const b = writer.append(userMessage("b"));
  writer.close();
  return { path: writer.path, a, b };
}

/** A header line and then `lines`, written as the whole file. */
async function writeFile(home: string, header: Record<string, unknown>, lines: string[]) {
  const path = join(home, "hand.jsonl");
  await Deno.writeTextFile(path, [JSON.stringify(header), ...lines].join("\n") + "\n");
  return path;
}

const HEADER = {
  type: "session",
  version: 1,
  id: "11111111-2222-4333-8444-555555555555",
  cwd: "/load",
  created: "2026-11-30T03:08:37.123Z",
  ternVersion: "test",
};

Deno.test("loadSession() skips a torn last line with a warning naming the line", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const { path, a, b } = await twoEntrySession(home);
    await Deno.writeTextFile(path, TORN_LINE, { append: true });
    const loaded = await loadSession(path);
    deepEqual(loaded.entries, [a, b]);
    deepEqual(loaded.warnings, [
      `Skipped line 4 of "${path}": not complete JSON (a write was cut off)`,
    ]);
    equal(loaded.endsWithNewline, false);
  } finally {
    await cleanup();
  }
});

Deno.test("loadSession() keeps reading after a torn line that a later append stepped over", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const { path, a, b } = await twoEntrySession(home);
    await Deno.writeTextFile(path, TORN_LINE, { append: true });
    const { writer } = await SessionWriter.open(path);
    const c = writer.append(userMessage("c"));
    writer.close();
    const text = await Deno.readTextFile(path);
    ok(text.includes(`${TORN_LINE}\n{"type":"message","id":"${c.id}"`), text);
    const loaded = await loadSession(path);
    deepEqual(loaded.entries, [a, b, c]);
    equal(c.parentId, b.id);
    deepEqual(loaded.warnings, [
      `Skipped line 4 of "${path}": not complete JSON (a write was cut off)`,
    ]);
    equal(loaded.endsWithNewline, true);
  } finally {
    await cleanup();
  }
});

Deno.test("loadSession() wraps an unknown entry type and keeps its children reachable", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const future = {
      type: "hologram",
      id: "f0000002",
      parentId: "f0000001",
      timestamp: "2026-11-30T03:09:00.000Z",
      beam: { colour: "blue" },
    };
    const child = {
      type: "message",
      id: "f0000003",
      parentId: "f0000002",
      timestamp: "2026-11-30T03:09:01.000Z",
      message: { role: "user", content: "under the hologram" },
    };
    const root = {
      type: "model",
      id: "f0000001",
      parentId: null,
      timestamp: "2026-11-30T03:08:59.000Z",
      model: "m",
    };
    const path = await writeFile(home, HEADER, [root, future, child].map((e) => JSON.stringify(e)));
    const loaded = await loadSession(path);
    deepEqual(loaded.warnings, []);
    deepEqual(loaded.entries, [
      root,
      {
        type: "unknown",
        id: "f0000002",
        parentId: "f0000001",
        timestamp: future.timestamp,
        raw: future,
      },
      child,
    ]);
    const tree = new SessionTree(loaded.entries);
    deepEqual(tree.path().map((entry) => entry.id), ["f0000001", "f0000002", "f0000003"]);
    deepEqual(tree.children("f0000002"), [child]);
  } finally {
    await cleanup();
  }
});

Deno.test("loadSession() skips lines that are not entries and roots a bad parentId", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const good = { type: "mode", id: "a0000001", parentId: null, timestamp: "t", mode: "plan" };
    const path = await writeFile(home, HEADER, [
      JSON.stringify(good),
      JSON.stringify({ type: "mode", parentId: "a0000001", timestamp: "t", mode: "x" }),
      "[1, 2]",
      "",
      JSON.stringify({ type: "mode", id: "a0000002", parentId: 7, timestamp: "t", mode: "y" }),
    ]);
    const loaded = await loadSession(path);
    deepEqual(loaded.entries, [
      good,
      { type: "mode", id: "a0000002", parentId: null, timestamp: "t", mode: "y" },
    ]);
    deepEqual(loaded.warnings, [
      `Skipped line 3 of "${path}": no string "id" and "timestamp"`,
      `Skipped line 4 of "${path}": not a JSON object`,
      `Entry "a0000002" on line 6 of "${path}" has no string or null "parentId": read as a root`,
    ]);
  } finally {
    await cleanup();
  }
});

Deno.test("loadSession() loads a newer format version with a warning", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const path = await writeFile(home, { ...HEADER, version: 2 }, []);
    const loaded = await loadSession(path);
    equal(loaded.header.version, 2);
    deepEqual(loaded.entries, []);
    deepEqual(loaded.warnings, [
      `Session "${path}" has format version 2, newer than this tern reads (1): entries of ` +
      "unknown types are kept but ignored",
    ]);
  } finally {
    await cleanup();
  }
});

Deno.test("loadSession() names the file when the first line is not a session header", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const cases: [string, string][] = [
      ["", "the file is empty"],
      ['{"type":"sess', "not complete JSON"],
      ['{"type":"message","id":"x"}\n', 'no "type": "session"'],
      [
        '{"type":"session","version":"1","id":"x","cwd":"/","created":"t"}\n',
        'no numeric "version"',
      ],
      ['{"type":"session","version":1,"cwd":"/","created":"t"}\n', 'no string "id"'],
    ];
    for (const [text, why] of cases) {
      const path = join(home, "bad.jsonl");
      await Deno.writeTextFile(path, text);
      const message =
        `Cannot load session "${path}": the first line is not a session header (${why})`;
      await rejects(loadSession(path), (error: unknown) => {
        ok(error instanceof SessionFileError);
        equal(error.path, path);
        equal(error.message, message);
        return true;
      });
    }
    const missing = join(home, "missing.jsonl");
    await rejects(loadSession(missing), {
      name: "SessionFileError",
      message: `Cannot load session "${missing}": file not found`,
    });
  } finally {
    await cleanup();
  }
});

Deno.test("loadSession() reads lines longer than its read buffer", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/load", ternVersion: "test" });
    const big = writer.append(userMessage("é✓".repeat(700_000)));
    const small = writer.append(userMessage("small"));
    writer.close();
    const loaded = await loadSession(writer.path);
    deepEqual(loaded.entries, [big, small]);
  } finally {
    await cleanup();
  }
});
