/**
 * A run killed (SIGKILL, a crash, the OOM killer) between writing its session's header and its
 * first entry leaves a file of a header alone: a run that ends removes it. As the newest session,
 * `tern run -c` and `tern sessions show -c` took it, and the person's conversation before was left
 * behind for an empty one.
 */
import { equal } from "node:assert/strict";
import { latestSession } from "../../src/session/paths.ts";
import { Session } from "../../src/session/session.ts";
import { tempWorkspace } from "../support/tern_process.ts";

Deno.test("latestSession() passes over a session whose run was killed before its first entry", async () => {
  const ws = await tempWorkspace();
  try {
    const talked = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    talked.append({ type: "message", message: { role: "user", content: "the work so far" } });
    talked.close();
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Killed after the header: nothing removed it.
    const killed = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    killed.close();
    equal(await latestSession(ws.home, ws.dir), talked.path);
    // A cut-off first entry is a line: that session is continued, its line kept for the person.
    await Deno.writeTextFile(killed.path, '{"type":"message","id":"ab', { append: true });
    equal(await latestSession(ws.home, ws.dir), killed.path);
  } finally {
    await ws.cleanup();
  }
});
