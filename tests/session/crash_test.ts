import { deepEqual, equal, ok } from "node:assert/strict";
import { loadSession } from "../../src/session/load.ts";
import { SessionWriter } from "../../src/session/store.ts";
import { SessionTree } from "../../src/session/tree.ts";
import { readLines, spawnFixture, tempHome, userMessage } from "./_helpers.ts";

const KILLS = 8;
/** Entries a child writes at most before idling: bounds the file to a few tens of MB. */
const MAX_PER_CHILD = 120;
const TORN = /^Skipped line \d+ of ".*": not complete JSON \(a write was cut off\)$/;

/**
 * Runs append_loop.ts on `path` and kills it with SIGKILL a random 0–60 ms after it has opened
 * the session. Returns the ids it reported as written (complete stdout lines only).
 */
async function appendUntilKilled(path: string): Promise<string[]> {
  const child = spawnFixture("append_loop.ts", [path, String(MAX_PER_CHILD)]);
  const stderr = new Response(child.stderr).text();
  const reported: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  await readLines(child.stdout, (line) => {
    if (line === "ready") {
      timer = setTimeout(() => child.kill("SIGKILL"), Math.random() * 60);
    } else {
      reported.push(line);
    }
  });
  const status = await child.status;
  clearTimeout(timer);
  await child.stdin.close().catch(() => {});
  equal(status.signal, "SIGKILL", `the writer ended on its own: ${await stderr}`);
  await stderr;
  return reported;
}

Deno.test("SessionWriter loses at most the entry being written when killed with SIGKILL", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const writer = await SessionWriter.create(home, { cwd: "/crash", ternVersion: "test" });
    writer.append(userMessage("start"));
    writer.close();
    const written: string[] = [];
    let torn = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      written.push(...await appendUntilKilled(writer.path));
      const loaded = await loadSession(writer.path);
      const ids = new Set(loaded.entries.map((entry) => entry.id));
      const missing = written.filter((id) => !ids.has(id));
      deepEqual(missing, [], `after kill ${kill + 1}, reported entries are missing`);
      ok(loaded.warnings.every((warning) => TORN.test(warning)), loaded.warnings.join("\n"));
      ok(
        loaded.warnings.length <= torn + 1,
        `kill ${kill + 1} left more than one torn line: ${loaded.warnings.join("\n")}`,
      );
      torn = loaded.warnings.length;
      // Every entry hangs under the one before it: each run continued from the last whole entry.
      deepEqual(new SessionTree(loaded.entries).warnings, []);
    }
    const { writer: last } = await SessionWriter.open(writer.path);
    const final = last.append(userMessage("after the crashes"));
    last.close();
    const loaded = await loadSession(writer.path);
    const ids = new Set(loaded.entries.map((entry) => entry.id));
    deepEqual(written.filter((id) => !ids.has(id)), []);
    equal(loaded.warnings.length, torn, "the final append did not start on a fresh line");
    deepEqual(loaded.entries.at(-1), final);
    equal(loaded.endsWithNewline, true);
    deepEqual(new SessionTree(loaded.entries).path().at(-1), final);
  } finally {
    await cleanup();
  }
});
