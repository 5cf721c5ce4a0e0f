/**
 * Session folders are the person's alone: a new session in folders an older tern or a `mkdir`
 * left readable by others makes them 0700, and every session file is 0600. Real folders in a
 * temporary TERN_HOME.
 */
import { equal } from "node:assert/strict";
import { dirname } from "node:path";
import { sessionFolder, sessionsRoot } from "../../src/session/paths.ts";
import { Session } from "../../src/session/session.ts";
import { tempHome } from "./_helpers.ts";

Deno.test("Session.create() makes loose session folders 0700 and the file 0600", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const folder = sessionFolder(home, "/w");
    Deno.mkdirSync(folder, { recursive: true });
    Deno.chmodSync(sessionsRoot(home), 0o755);
    Deno.chmodSync(folder, 0o775);
    const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "message", message: { role: "user", content: "hi" } });
    session.close();
    equal(dirname(session.path), folder);
    equal(Deno.statSync(sessionsRoot(home)).mode! & 0o777, 0o700);
    equal(Deno.statSync(folder).mode! & 0o777, 0o700);
    equal(Deno.statSync(session.path).mode! & 0o777, 0o600);
  } finally {
    await cleanup();
  }
});
