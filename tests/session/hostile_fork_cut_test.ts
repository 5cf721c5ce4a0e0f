/**
 * `tern sessions fork` copies a session in many writes. Cut off by Ctrl-C (or a kill) half way,
 * the copy must never be a session of its own: the newest one, it would be what `tern run -c`
 * and `tern sessions show -c` continue and show, with part of the history missing.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { forkSession } from "../../src/session/fork.ts";
import { latestSession, listSessions, sessionFolder } from "../../src/session/paths.ts";
import { Session } from "../../src/session/session.ts";
import { tempWorkspace, ternCommand } from "../support/tern_process.ts";

const ENTRIES = 20_000;

Deno.test("tern sessions fork cut off by Ctrl-C leaves no session with part of the history", async () => {
  const ws = await tempWorkspace();
  try {
    const source = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    for (let i = 0; i < ENTRIES; i++) {
      const role = i % 2 === 0 ? "user" : "assistant";
      source.append({ type: "message", message: { role, content: `${i} ${"x".repeat(600)}` } });
    }
    source.close();
    const folder = sessionFolder(ws.home, ws.dir);
    const before = new Set([...Deno.readDirSync(folder)].map((entry) => entry.name));
    const child = ternCommand(["sessions", "fork", source.id], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home },
    }, "null").spawn();
    // Ctrl-C once the copy has begun: a new file in the folder holds more than its header.
    const copying = () =>
      [...Deno.readDirSync(folder)].some((entry) =>
        !before.has(entry.name) && Deno.statSync(`${folder}/${entry.name}`).size > 100_000
      );
    let done = false;
    const status = child.status.then((s) => (done = true, s));
    while (!done && !copying()) await new Promise((resolve) => setTimeout(resolve, 2));
    if (!done) child.kill("SIGINT");
    await child.output();
    await status;
    // Every session listed is whole: the source, and the fork if it ended before the signal.
    const sessions = await listSessions(ws.home, { cwd: ws.dir });
    ok(sessions.length >= 1);
    deepEqual(sessions.map((s) => s.entries), sessions.map(() => ENTRIES));
    const latest = await latestSession(ws.home, ws.dir);
    equal(sessions.find((s) => s.path === latest)?.entries, ENTRIES);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("forkSession() makes a fork listed and found only once it is whole", async () => {
  const ws = await tempWorkspace();
  try {
    const source = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    source.append({ type: "message", message: { role: "user", content: "hello" } });
    source.close();
    const fork = await forkSession(ws.home, source.path, { ternVersion: "test" });
    fork.close();
    equal(await latestSession(ws.home, ws.dir), fork.path);
    equal((await listSessions(ws.home)).length, 2);
    const names = [...Deno.readDirSync(sessionFolder(ws.home, ws.dir))].map((entry) => entry.name);
    ok(names.every((name) => !name.endsWith(".draft")), names.join(", "));
  } finally {
    await ws.cleanup();
  }
});

Deno.test("forkSession() removes drafts forks cut off left, not one a live fork writes", async () => {
  const ws = await tempWorkspace();
  try {
    const source = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    source.append({ type: "message", message: { role: "user", content: "hello" } });
    source.close();
    const cutOff = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test", draft: true });
    cutOff.close();
    const live = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test", draft: true });
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const draft of [cutOff, live]) Deno.utimeSync(draft.path, hourAgo, hourAgo);
    const fork = await forkSession(ws.home, source.path, { ternVersion: "test" });
    fork.close();
    equal(Deno.lstatSync(live.path).isFile, true, "a draft its writer holds is kept");
    equal(
      [...Deno.readDirSync(sessionFolder(ws.home, ws.dir))].some((e) =>
        e.name.endsWith(".draft") && !live.path.endsWith(e.name)
      ),
      false,
    );
    live.close();
  } finally {
    await ws.cleanup();
  }
});
