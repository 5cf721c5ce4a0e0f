/** TurnCheckpoints: what a turn of many writing calls in quick succession records. */
import { deepEqual } from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { TurnCheckpoints } from "../../src/harness/rewind/turn_checkpoints.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import type { Tool } from "../../src/tools/define.ts";
import { Session } from "../../src/session/session.ts";

Deno.test("TurnCheckpoints.endTurn() records every change of calls in quick succession, by tool or command", async () => {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-home-" }));
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ws-" }));
  try {
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const user = session.append({ type: "message", message: { role: "user", content: "go" } });
    // A writing tool that declares the file it writes when asked to (a file tool), or not (a
    // command that changes files).
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
    const checkpoints = new TurnCheckpoints({
      sessionPath: session.path,
      sessionId: session.id,
      workspace: ws,
      warn: (text) => {
        throw new Error(text);
      },
    });
    const tools = checkpoints.wrap(new ToolRegistry([writer]), user.id);
    const run = (i: number) =>
      tools.get("writer")!.run({ file: `f${i}.txt`, declared: i % 2 === 0 }, {} as never);
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
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("TurnCheckpoints.wrap() takes no snapshot before the request is out: requestOut() starts it", async () => {
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
      paths: () => Promise.resolve([{ path: "made.txt", write: true }]),
      run: async () => {
        await Deno.writeTextFile(join(ws, "made.txt"), "made\n");
        return { status: "OK", output: "" };
      },
    } as unknown as Tool;
    const checkpoints = new TurnCheckpoints({
      sessionPath: session.path,
      sessionId: session.id,
      workspace: ws,
      warn: (text) => {
        throw new Error(text);
      },
    });
    const tools = checkpoints.wrap(new ToolRegistry([writer]), user.id);
    await checkpoints.idle();
    // Nothing ran before the request: no store, no git process (they would delay the request).
    deepEqual([...Deno.readDirSync(dirname(session.path))].map((e) => e.name), [
      basename(session.path),
    ]);
    // Changed after the turn began but before the request was out: not the turn's doing.
    await Deno.writeTextFile(join(ws, "before.txt"), "the person's\n");
    checkpoints.requestOut();
    checkpoints.requestOut();
    await checkpoints.idle();
    await tools.get("writer")!.run({}, {} as never);
    const changes = await checkpoints.endTurn();
    deepEqual(changes.map((c) => `${c.path} ${c.status} ${c.by}`), ["made.txt added tool"]);
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});
