/**
 * The id index next to a session written by a process killed with SIGKILL mid-write: what the
 * kill leaves is removed by the next write, so kills never pile files up in the sessions folder.
 */
import { deepEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { readIdIndex, writeIdIndex } from "../../src/session/id_index.ts";
import { readLines, spawnFixture, tempHome } from "./_helpers.ts";

/** Every name in `folder` but the session file itself. */
async function besides(folder: string, session: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(folder)) {
    if (entry.name !== session) names.push(entry.name);
  }
  return names.sort();
}

/** Runs index_loop.ts on `path` and kills it with SIGKILL a random 20–150 ms after it starts. */
async function writeUntilKilled(path: string): Promise<void> {
  const child = spawnFixture("index_loop.ts", [path, "100000"]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  await readLines(child.stdout, (line) => {
    if (line === "ready") timer = setTimeout(() => child.kill("SIGKILL"), 20 + Math.random() * 130);
  });
  await child.status;
  clearTimeout(timer);
  await child.stdin.close().catch(() => {});
  await child.stderr.cancel();
}

Deno.test("writeIdIndex() removes the temporary a writer killed mid-write left", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const name = "2026-01-01T00-00-00-000Z_s.jsonl";
    const path = join(home, name);
    await Deno.writeTextFile(path, "");
    // Kill until one kill lands between the temporary's creation and its rename.
    let leftovers: string[] = [];
    for (let kill = 0; kill < 60; kill++) {
      await writeUntilKilled(path);
      leftovers = (await besides(home, name)).filter((n) => n !== `${name}.ids`);
      if (leftovers.length > 0) break;
    }
    ok(leftovers.length > 0, "no kill landed mid-write");
    writeIdIndex(path, { sessionId: "s", size: 7, ids: ["abcd0001"] });
    deepEqual(await besides(home, name), [`${name}.ids`]);
    deepEqual(readIdIndex(path, "s")?.ids(), ["abcd0001"]);
  } finally {
    await cleanup();
  }
});

Deno.test("writeIdIndex() never writes through a link at its temporary's name", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const path = join(home, "2026-01-01T00-00-00-000Z_s.jsonl");
    const target = join(home, "elsewhere.txt");
    await Deno.writeTextFile(target, "kept");
    await Deno.symlink(target, `${path}.ids.tmp`);
    writeIdIndex(path, { sessionId: "s", size: 0, ids: ["abcd0001"] });
    deepEqual(await Deno.readTextFile(target), "kept");
    deepEqual(readIdIndex(path, "s")?.ids(), ["abcd0001"]);
  } finally {
    await cleanup();
  }
});
