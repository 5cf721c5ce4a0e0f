/**
 * `tern memory log` and `undo` read consolidation records from the workspace's session files:
 * a damaged one (its files not a list, a file without its path or texts) is left out, not an
 * internal error that hides every other consolidation and makes none undoable.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { Session } from "../../src/session/session.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const DAMAGED: unknown[] = [
  { status: "done", upTo: null, from: null, files: { path: ".tern/memory/a.md" } },
  { status: "done", upTo: null, from: null, files: [5] },
  { status: "done", upTo: null, from: null, files: [{ path: 7, before: null, after: "x" }] },
  { status: "done", upTo: null, from: null, files: [{ path: ".tern/memory/a.md", before: 1 }] },
  { status: "done", upTo: 3, from: null, files: [] },
];

Deno.test("tern memory log and undo leave out a damaged consolidation record and undo the others", async () => {
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home };
  const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
  try {
    const topic = join(ws.dir, ".tern", "memory", "build.md");
    await Deno.mkdir(join(ws.dir, ".tern", "memory"), { recursive: true });
    await Deno.writeTextFile(topic, "# Build\n- Use deno\n");
    const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "0.0.0" });
    const damaged = DAMAGED.map((data) =>
      session.append({ type: "consolidation", data: data as object }).id
    );
    const good = session.append({
      type: "consolidation",
      data: {
        status: "done",
        upTo: null,
        from: null,
        files: [{ path: ".tern/memory/build.md", before: null, after: "# Build\n- Use deno\n" }],
      },
    }).id;
    session.close();

    const log = await tern(["memory", "log"]);
    equal(log.code, 0, log.stderr);
    ok(!log.stderr.includes("internal error"), log.stderr);
    match(log.stdout, new RegExp(`^${good}  .* done .* \\.tern/memory/build\\.md$`, "m"));
    for (const id of damaged) ok(!log.stdout.includes(id), log.stdout);
    const json = await tern(["memory", "log", "--json"]);
    equal(json.code, 0, json.stderr);
    equal(JSON.parse(json.stdout).length, 1);

    const refused = await tern(["memory", "undo", damaged[2]]);
    equal(refused.code, 2, refused.stderr);
    match(refused.stderr, /Cannot undo consolidation ".*": no consolidation of this workspace/);

    const undone = await tern(["memory", "undo", good]);
    equal(undone.code, 0, undone.stderr);
    match(undone.stdout, /restored \.tern\/memory\/build\.md/);
    ok(!(await Deno.stat(topic).then(() => true, () => false)), "the topic file is removed");
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern memory undo names a planted .tern/memory link or FIFO topic and changes nothing", async () => {
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home };
  const outside = await Deno.makeTempDir({ prefix: "tern-outside-" });
  try {
    await Deno.writeTextFile(join(outside, "build.md"), "# Build\n- Use deno\n");
    const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "0.0.0" });
    const id = session.append({
      type: "consolidation",
      data: {
        status: "done",
        upTo: null,
        from: null,
        files: [{ path: ".tern/memory/build.md", before: null, after: "# Build\n- Use deno\n" }],
      },
    }).id;
    session.close();
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.symlink(outside, join(ws.dir, ".tern", "memory"));
    const linked = await runTern(["memory", "undo", id], { cwd: ws.dir, env });
    equal(linked.code, 1, linked.stderr);
    match(linked.stderr, /^tern: Cannot undo consolidation ".*": Cannot write memory in ".*": /);
    ok(!linked.stderr.includes("internal error"), linked.stderr);
    equal(await Deno.readTextFile(join(outside, "build.md")), "# Build\n- Use deno\n");

    await Deno.remove(join(ws.dir, ".tern", "memory"));
    await Deno.mkdir(join(ws.dir, ".tern", "memory"));
    const made = await new Deno.Command("mkfifo", {
      args: [join(ws.dir, ".tern", "memory", "build.md")],
    }).output();
    equal(made.code, 0);
    const fifo = await runTern(["memory", "undo", id], {
      cwd: ws.dir,
      env,
      signal: AbortSignal.timeout(30_000),
    });
    equal(fifo.code, 1, fifo.stderr);
    match(fifo.stderr, /not a regular file with one link/);
    ok(!fifo.stderr.includes("internal error"), fifo.stderr);
  } finally {
    await Deno.remove(outside, { recursive: true });
    await ws.cleanup();
  }
});
