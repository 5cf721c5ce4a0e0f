/**
 * Reading a session from its end (src/session/tail.ts) takes a line longer than the whole-file
 * reader's limit as that reader does: only its first bytes, so it is skipped as damaged with the
 * same warning, and a cut-off line of hundreds of megabytes is never put together in memory.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { loadSession } from "../../src/session/load.ts";
import { SessionTree } from "../../src/session/tree.ts";
import { loadTail } from "../../src/session/tail.ts";
import { MAX_LINE_BYTES } from "../../src/session/_lines.ts";
import { SessionWriter } from "../../src/session/store.ts";
import { tempHome, userMessage } from "./_helpers.ts";

const BASE = { type: "message", timestamp: "2026-12-04T00:00:00.000Z" };

/** A session of two messages, its path and the ids. */
async function twoMessages(home: string): Promise<{ path: string; ids: string[] }> {
  const writer = await SessionWriter.create(home, { cwd: "/long", ternVersion: "test" });
  const ids = [writer.append(userMessage("one")).id, writer.append(userMessage("two")).id];
  writer.close();
  return { path: writer.path, ids };
}

function line(id: string, parentId: string, content: string): string {
  return JSON.stringify({ ...BASE, id, parentId, message: { role: "user", content } });
}

Deno.test("loadTail() skips a whole line past maxLineBytes as damaged, as loadSession() skips one past its limit", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const { path, ids } = await twoMessages(home);
    const start = (await Deno.stat(path)).size;
    // Complete, well-formed JSON: only its length makes it damaged.
    await Deno.writeTextFile(path, line("long0001", ids[1], "x".repeat(5000)) + "\n", {
      append: true,
    });
    for (const chunkSize of [64, 1000, 1 << 20]) {
      const tail = loadTail(path, { chunkSize, maxLineBytes: 4096 });
      deepEqual(tail.path.map((entry) => entry.id), ids, `chunks of ${chunkSize}`);
      deepEqual(tail.warnings, [
        `Skipped the line at byte ${start} of "${path}": not complete JSON (a write was cut off)`,
      ]);
    }
    // A line just within the limit is read.
    const within = loadTail(path, { chunkSize: 64, maxLineBytes: 8192 });
    equal(within.path.at(-1)?.id, "long0001");
  } finally {
    await cleanup();
  }
});

Deno.test("loadTail() and loadSession() agree on a line past MAX_LINE_BYTES", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const { path, ids } = await twoMessages(home);
    // Well-formed JSON past the limit, then an entry under it: both readers skip the long one,
    // so the entry after it is a root for both.
    await Deno.writeTextFile(
      path,
      `${line("huge0001", ids[1], "x".repeat(MAX_LINE_BYTES))}\n${
        line("last0001", "huge0001", "z")
      }\n`,
      { append: true },
    );
    const whole = await loadSession(path);
    const wholePath = new SessionTree(whole.entries).path().map((entry) => entry.id);
    deepEqual(wholePath, ["last0001"]);
    const tail = loadTail(path);
    deepEqual(tail.path.map((entry) => entry.id), wholePath);
    equal(tail.warnings.length, 1, tail.warnings.join("\n"));
  } finally {
    await cleanup();
  }
});

Deno.test("loadTail() resumes a session whose cut-off last line is 600 MB without reading it into memory", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const { path, ids } = await twoMessages(home);
    await Deno.writeTextFile(path, '{"type":"message",', { append: true });
    // Sparse: the file system stores none of the 600 MB of NUL bytes.
    await Deno.truncate(path, (await Deno.stat(path)).size + 600 * 1024 * 1024);
    const before = Deno.memoryUsage().rss;
    const tail = loadTail(path);
    deepEqual(tail.path.map((entry) => entry.id), ids);
    equal(tail.warnings.length, 1, tail.warnings.join("\n"));
    match(tail.warnings[0], /^Skipped the line at byte \d+ of ".*": not complete JSON/);
    const grown = Deno.memoryUsage().rss - before;
    ok(grown < 128 * 1024 * 1024, `${grown} bytes more memory`);
  } finally {
    await cleanup();
  }
});
