/** A session discarded unwritten (a start that failed) leaves no folder its creation made. */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { Session } from "../../src/session/session.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("Session.closeOrDiscard() of an empty session removes the folders its creation made", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-discard-" }));
  try {
    const ternHome = join(root, ".tern");
    const session = Session.create(ternHome, { cwd: join(root, "ws"), ternVersion: "test" });
    ok(await exists(join(ternHome, "sessions")));
    session.closeOrDiscard();
    equal(await exists(join(ternHome, "sessions")), false, "the sessions folder was left");
    equal(await exists(ternHome), false, "the tern home it made was left");
    ok(await exists(root), "a folder it did not make was removed");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("Session.closeOrDiscard() keeps a folder another session is in, and folders made before", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-discard-" }));
  try {
    const ternHome = join(root, ".tern");
    await Deno.mkdir(ternHome);
    const cwd = join(root, "ws");
    const kept = Session.create(ternHome, { cwd, ternVersion: "test" });
    kept.append({ type: "message", message: { role: "user", content: "hi" } });
    const empty = Session.create(ternHome, { cwd, ternVersion: "test" });
    empty.closeOrDiscard();
    equal(await exists(empty.path), false);
    ok(await exists(kept.path), "the other session went");
    kept.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
