/**
 * A session opened from a file whose every entry line is damaged (the first write cut off by a
 * kill, entries a newer tern wrote in another shape) has no entry it could read. Closing it once
 * removed the file, when nothing was appended: `tern -c`, then quitting, deleted the lines the
 * warning had just named. Only a session this process made, still empty, is discarded.
 */
import { equal, ok } from "node:assert/strict";
import { Session } from "../../src/session/session.ts";
import { tempHome } from "./_helpers.ts";

const TORN = '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-12-01T00:00:00.000Z",' +
  '"message":{"role":"user","content":"my long careful prompt';

Deno.test("closeOrDiscard() keeps a session file opened with only damaged lines", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const made = Session.create(home, { cwd: "/w", ternVersion: "test" });
    made.close();
    await Deno.writeTextFile(made.path, TORN, { append: true });
    const before = await Deno.readTextFile(made.path);
    const opened = await Session.open(made.path);
    ok(opened.warnings.some((w) => w.includes("not complete JSON")), opened.warnings.join("\n"));
    equal(opened.entries.length, 0);
    opened.closeOrDiscard();
    equal(await Deno.readTextFile(made.path), before, "the file and its torn line are kept");
  } finally {
    await cleanup();
  }
});

Deno.test("closeOrDiscard() removes a session this process made and wrote nothing to", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const made = Session.create(home, { cwd: "/w", ternVersion: "test" });
    made.closeOrDiscard();
    ok(!(await Deno.stat(made.path).then(() => true, () => false)), "an empty new session is gone");
  } finally {
    await cleanup();
  }
});
