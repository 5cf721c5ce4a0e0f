/**
 * A compaction cut off by SIGKILL while the summary is asked for: the session resumes as it was
 * (nothing lost, no half compaction), and compacts again from there.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { Message } from "../../src/core/messages.ts";
import { loadSession } from "../../src/session/load.ts";
import { Session } from "../../src/session/session.ts";
import { startScriptedServer } from "../support/scripted_server.ts";

const CHILD = fileURLToPath(new URL("./_compact_child.ts", import.meta.url));

function history(): Message[] {
  const messages: Message[] = [];
  for (let turn = 0; turn < 6; turn++) {
    messages.push(
      { role: "user", content: `request ${turn}: ${"read the parser and fix it. ".repeat(60)}` },
      { role: "assistant", content: `answer ${turn}: ${"the parser is fixed now. ".repeat(60)}` },
    );
  }
  return messages;
}

Deno.test("compactSession() killed with SIGKILL mid-summary leaves the session whole, and it compacts again", async () => {
  const home = await Deno.makeTempDir({ prefix: "tern-kill-" });
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  let asked = () => {};
  const summaryAsked = new Promise<void>((resolve) => asked = resolve);
  let hold = true;
  const server = await startScriptedServer(() => ({ text: "## Goal\n- fix the parser" }), {
    beforeReply: () => {
      asked();
      return hold ? held : Promise.resolve();
    },
  });
  try {
    const session = Session.create(home, { cwd: "/project", ternVersion: "test" });
    for (const message of history()) session.append({ type: "message", message });
    const path = session.path;
    const before = session.state().items;
    session.close();

    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--allow-all", "--no-check", CHILD, path, server.baseUrl],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    await summaryAsked;
    child.kill("SIGKILL");
    const status = await child.status;
    assert.equal(status.signal, "SIGKILL");
    await child.stdout.cancel();
    await child.stderr.cancel();

    // The lock died with the process; the session is as it was, with no compaction.
    const resumed = await Session.open(path);
    assert.deepEqual(resumed.warnings, []);
    assert.deepEqual(resumed.state().items, before);
    assert.equal(resumed.entries.filter((entry) => entry.type === "compaction").length, 0);
    resumed.close();

    // Compacting again works, and a resume from it reads no line before its kept entries.
    hold = false;
    release();
    const again = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--allow-all", "--no-check", CHILD, path, server.baseUrl],
    }).output();
    assert.equal(new TextDecoder().decode(again.stdout), "opened\ncompacted\n");
    const loaded = await loadSession(path);
    assert.deepEqual(loaded.warnings, []);
    assert.equal(loaded.entries.filter((entry) => entry.type === "compaction").length, 1);
    const last = await Session.open(path);
    const items = last.state().items;
    assert.match(String(items[0].message.content), /<summary>\n## Goal\n- fix the parser/);
    assert.deepEqual(items.slice(1), before.slice(before.length - items.length + 1));
    last.close();
  } finally {
    release();
    await server.close();
    await Deno.remove(home, { recursive: true });
  }
});
