/**
 * A session line far longer than tern ever writes (a damaged or hand-made file): loading skips
 * it as damaged instead of holding it in memory, and the session list takes a long first
 * message's title from the line's start.
 */
import { deepEqual, equal, match } from "node:assert/strict";
import { loadSession } from "../../src/session/load.ts";
import { listSessions } from "../../src/session/paths.ts";
import { MAX_LINE_BYTES } from "../../src/session/_lines.ts";
import { SessionWriter } from "../../src/session/store.ts";
import { tempHome, userMessage } from "./_helpers.ts";

const BASE = { type: "message", parentId: null, timestamp: "2026-12-04T00:00:00.000Z" };

Deno.test("loadSession() skips a line over MAX_LINE_BYTES as damaged, and reads on", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/long", ternVersion: "test" });
    const first = writer.append(userMessage("before"));
    writer.close();
    const huge = JSON.stringify({
      ...BASE,
      id: "huge0001",
      message: { role: "user", content: "x".repeat(MAX_LINE_BYTES + 10) },
    });
    await Deno.writeTextFile(writer.path, huge + "\n", { append: true });
    const after = JSON.stringify({
      ...BASE,
      id: "after001",
      message: { role: "user", content: "after" },
    });
    await Deno.writeTextFile(writer.path, after + "\n", { append: true });
    const loaded = await loadSession(writer.path);
    deepEqual(loaded.entries.map((entry) => entry.id), [first.id, "after001"]);
    equal(loaded.warnings.length, 1, loaded.warnings.join("\n"));
    match(loaded.warnings[0], /^Skipped line 3 of /);
  } finally {
    await cleanup();
  }
});

Deno.test("listSessions() takes the title of a first message too long to parse from its start", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/long", ternVersion: "test" });
    // Past the list's parse limit (64 KiB), with an escape in the title.
    writer.append(userMessage(`fix the "parser"\n${"x".repeat(200_000)}`));
    writer.close();
    const [info] = await listSessions(home);
    equal(info.entries, 1);
    equal(info.firstUserText, `fix the "parser" ${"x".repeat(83)}`);
  } finally {
    await cleanup();
  }
});
