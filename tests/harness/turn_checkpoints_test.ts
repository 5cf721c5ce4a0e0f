/** TurnCheckpoints: what a turn of many writing calls in quick succession records. */
import { deepEqual, ok } from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { TurnCheckpoints } from "../../src/harness/rewind/turn_checkpoints.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import type { Tool } from "../../src/tools/define.ts";
import { Session } from "../../src/session/session.ts";
import { strictCheckpoints } from "../support/host_tool.ts";
import { readRecords, storeDir } from "../../src/harness/rewind/records.ts";

/** What a test gets: the workspace, the session's path, the checkpoints and the wrapped tools. */
interface Turn {
  ws: string;
  sessionPath: string;
  checkpoints: TurnCheckpoints;
  /**
   * Writes `file` in the workspace, declaring it as its write when `declared` (a file tool) or
   * not (a command).
   */
  write(file: string, declared: boolean): Promise<unknown>;
}

/**
 * Runs `body` over a fresh home, workspace and session, with one turn's checkpoints wrapping a
 * writing tool.
 */
async function withTurn(body: (turn: Turn) => Promise<void>): Promise<void> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-home-" }));
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ws-" }));
  try {
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const user = session.append({ type: "message", message: { role: "user", content: "go" } });
    const writer: Tool = {
      name: "writer",
      description: "",
      readOnly: false,
      runsIn: "host",
      parameters: {},
      paths: (args: { file: string; declared: boolean }) =>
        Promise.resolve(args.declared ? [{ path: args.file, write: true }] : []),
      run: async (args: { file: string }) => {
        await Deno.writeTextFile(join(ws, args.file), `${args.file}\n`);
        return { status: "OK", output: "" };
      },
    } as unknown as Tool;
    const checkpoints = strictCheckpoints(session, ws);
    const tools = checkpoints.wrap(new ToolRegistry([writer]), user.id);
    await body({
      ws,
      sessionPath: session.path,
      checkpoints,
      write: (file, declared) => tools.get("writer")!.run({ file, declared }, {} as never),
    });
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
}

Deno.test("TurnCheckpoints.endTurn() records every change of calls in quick succession, by tool or command", async () => {
  await withTurn(async ({ checkpoints, write }) => {
    const run = (i: number) => write(`f${i}.txt`, i % 2 === 0);
    // Some one after another, some side by side: each ends while snapshots are under way.
    for (let i = 0; i < 4; i++) await run(i);
    await Promise.all([4, 5, 6, 7, 8, 9].map(run));
    for (let i = 10; i < 12; i++) await run(i);
    const changes = await checkpoints.endTurn();
    deepEqual(
      changes.map((c) => `${c.path} ${c.status} ${c.by}`).sort(),
      Array.from({ length: 12 }, (_, i) => `f${i}.txt added ${i % 2 === 0 ? "tool" : "command"}`)
        .sort(),
    );
  });
});

Deno.test("TurnCheckpoints.wrap() takes no snapshot before the request is out: requestOut() starts it", async () => {
  await withTurn(async ({ ws, sessionPath, checkpoints, write }) => {
    await checkpoints.idle();
    // Nothing ran before the request: no store, no git process (they would delay the request).
    deepEqual([...Deno.readDirSync(dirname(sessionPath))].map((e) => e.name), [
      basename(sessionPath),
    ]);
    // Changed after the turn began but before the request was out: not the turn's doing.
    await Deno.writeTextFile(join(ws, "before.txt"), "the person's\n");
    checkpoints.requestOut();
    checkpoints.requestOut();
    await checkpoints.idle();
    await write("made.txt", true);
    const changes = await checkpoints.endTurn();
    deepEqual(changes.map((c) => `${c.path} ${c.status} ${c.by}`), ["made.txt added tool"]);
  });
});

Deno.test("TurnCheckpoints.abandon() stops a snapshot no call claimed, partway: no record, no lock; a later call takes one", async () => {
  await withTurn(async ({ ws, sessionPath, checkpoints, write }) => {
    // Enough files that storing them takes a while: the snapshot is stopped partway.
    for (let d = 0; d < 40; d++) {
      Deno.mkdirSync(join(ws, "many", `d${d}`), { recursive: true });
      for (let f = 0; f < 500; f++) {
        Deno.writeTextFileSync(join(ws, "many", `d${d}`, `f${f}`), `${d} ${f}\n`);
      }
    }
    checkpoints.requestOut();
    const store = storeDir(dirname(sessionPath));
    const named = (suffix: string) => {
      try {
        return [...Deno.readDirSync(store)].map((e) => e.name).filter((name) =>
          name.startsWith("index-") && name.endsWith(suffix)
        );
      } catch {
        return [];
      }
    };
    // git holds the index's lock while it stores files.
    while (named(".lock").length === 0) await new Promise((done) => setTimeout(done, 2));
    await checkpoints.abandon();
    deepEqual(named(".lock"), []);
    // None when its first step was stopped.
    const [index] = named("");
    const entries = index === undefined ? 0 : indexEntries(join(store, index));
    ok(entries < 20_000, "the snapshot ran to its end");
    // Nothing recorded, nothing failed (strictCheckpoints throws on a warning).
    deepEqual(await readRecords(sessionPath), []);
    Deno.removeSync(join(ws, "many"), { recursive: true });
    await write("made.txt", true);
    const changes = await checkpoints.endTurn();
    deepEqual(changes.map((c) => `${c.path} ${c.status} ${c.by}`), ["made.txt added tool"]);
    deepEqual((await readRecords(sessionPath)).map((r) => r.kind), ["before", "after"]);
  });
});

/** The entries of the git index at `path` (its header's count). */
function indexEntries(path: string): number {
  const header = Deno.readFileSync(path).subarray(0, 12);
  return new DataView(header.buffer, header.byteOffset).getUint32(8);
}

Deno.test("TurnCheckpoints tells the person, once, when a writing call waits for the turn's checkpoint", async () => {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-home-" }));
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ws-" }));
  try {
    for (let i = 0; i < 50; i++) Deno.writeTextFileSync(join(ws, `f${i}.txt`), `${i}\n`);
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const told: string[] = [];
    const checkpoints = new TurnCheckpoints({
      sessionPath: session.path,
      sessionId: session.id,
      workspace: ws,
      warn: (text) => told.push(text),
      rules: () => [],
      // Any wait at all: a snapshot takes git commands.
      slowMs: 0,
    });
    const writer = {
      name: "writer",
      description: "",
      readOnly: false,
      runsIn: "host",
      parameters: {},
      paths: () => Promise.resolve([]),
      run: async (args: { file: string }) => {
        await Deno.writeTextFile(join(ws, args.file), "made\n");
        return { status: "OK", output: "" };
      },
    } as unknown as Tool;
    for (const file of ["a.txt", "b.txt"]) {
      const user = session.append({ type: "message", message: { role: "user", content: "go" } });
      const tools = checkpoints.wrap(new ToolRegistry([writer]), user.id);
      await tools.get("writer")!.run({ file }, {} as never);
      await checkpoints.endTurn();
    }
    session.close();
    deepEqual(told, [
      "the call waits for this turn's checkpoint of the workspace (the first in a large " +
      "workspace reads every file once; rewindMaxFileBytes 0 turns checkpoints off)",
    ]);
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});
