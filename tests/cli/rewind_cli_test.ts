/**
 * End-to-end: real `tern run` turns against the scripted model server change files with the file
 * tools and with shell commands; `tern sessions rewind` restores them (edits, writes, deletes,
 * renames, permission bits, binary files, files made by bash), refuses to overwrite a file the
 * person changed since unless told, and can itself be undone.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply, ScriptedToolCall } from "../../src/llm/scripted.ts";
import { loadSession } from "../../src/session/load.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { readRecords } from "../../src/harness/rewind/records.ts";

const BINARY = new Uint8Array([0, 1, 2, 255, 254, 0, 10, 13, 10]);

/** The calls of each task, one model round each, then "done". */
function scriptOf(tasks: Record<string, ScriptedToolCall[][]>) {
  return (request: ModelRequest): ScriptedReply => {
    // A compaction's summary request carries no tools.
    if (request.tools.length === 0) return { text: "## Goal\nSUMMARY-MARK\n" };
    const users = request.messages.filter((m) => m.role === "user");
    const task = users[users.length - 1].content.split("\n")[0];
    const lastUser = request.messages.lastIndexOf(users[users.length - 1]);
    const round = request.messages.slice(lastUser).filter((m) => m.role === "assistant").length;
    const rounds = tasks[task] ?? [];
    return round < rounds.length ? { toolCalls: rounds[round] } : { text: `done: ${task}` };
  };
}

let ids = 0;
function call(name: string, args: Record<string, unknown>): ScriptedToolCall {
  return { id: `call_${++ids}`, name, arguments: JSON.stringify(args) };
}

async function withWorkspace(
  tasks: Record<string, ScriptedToolCall[][]>,
  fn: (ws: {
    dir: string;
    home: string;
    tern: (args: string[], extra?: Record<string, string>) => ReturnType<typeof runTern>;
    spawn: (args: string[]) => Deno.ChildProcess;
    userEntries: () => Promise<string[]>;
    sessionPath: () => string;
  }) => Promise<void>,
) {
  const server = await startScriptedServer(scriptOf(tasks), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  // tern's own process may write only its home and TMPDIR: the workspace is neither here.
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-rewind-tmp-" }));
  const env = {
    TMPDIR: tmp,
    TERN_HOME: ws.home,
    HOME: ws.home,
    TERN_API_KEY: "sk-test-rewind",
    TERN_BASE_URL: server.baseUrl,
    TERN_MODE: "bypass",
    TERN_MODEL: "scripted",
  };
  const sessionPath = () => {
    const folder = [...Deno.readDirSync(join(ws.home, "sessions"))][0].name;
    const file = [...Deno.readDirSync(join(ws.home, "sessions", folder))]
      .find((entry) => /_[0-9a-f-]+\.jsonl$/.test(entry.name))!.name;
    return join(ws.home, "sessions", folder, file);
  };
  try {
    await fn({
      dir: ws.dir,
      home: ws.home,
      tern: (args, extra = {}) => runTern(args, { cwd: ws.dir, env: { ...env, ...extra } }),
      spawn: (args) =>
        new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            ...declaredFlags(env, { cwd: ws.dir, args }),
            join(ROOT, "main.ts"),
            ...args,
          ],
          cwd: ws.dir,
          env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
          clearEnv: true,
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).spawn(),
      sessionPath,
      userEntries: async () =>
        (await loadSession(sessionPath())).entries.flatMap((entry) =>
          entry.type === "message" && entry.message.role === "user" ? [entry.id] : []
        ),
    });
  } finally {
    await server.close();
    await ws.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
}

function read(dir: string, path: string): string | undefined {
  try {
    return Deno.readTextFileSync(join(dir, path));
  } catch {
    return undefined;
  }
}

const mode = (dir: string, path: string) => Deno.statSync(join(dir, path)).mode! & 0o777;

testWith(
  [bwrapNeed],
  "tern sessions rewind restores edits, writes, deletes, renames, modes, binary and bash-made files",
  async () => {
    const tasks = {
      "change things": [
        [call("edit", { path: "a.txt", old_string: "one", new_string: "two" })],
        [call("write", { path: "new.txt", content: "written by the tool\n" })],
        [call("bash", {
          command: "rm old.txt && mv keep/x keep/y && chmod +x run.sh && " +
            "printf 'made by bash' > bashmade.txt && printf 'changed' > bin.dat",
        })],
      ],
    };
    await withWorkspace(tasks, async ({ dir, tern, userEntries, sessionPath }) => {
      Deno.writeTextFileSync(join(dir, "a.txt"), "one\n");
      Deno.writeTextFileSync(join(dir, "old.txt"), "old\n");
      Deno.writeTextFileSync(join(dir, "run.sh"), "echo hi\n", { mode: 0o644 });
      Deno.chmodSync(join(dir, "run.sh"), 0o644);
      Deno.mkdirSync(join(dir, "keep"));
      Deno.writeTextFileSync(join(dir, "keep", "x"), "kept\n");
      Deno.writeFileSync(join(dir, "bin.dat"), BINARY);

      const run = await tern(["run", "change things"]);
      equal(run.code, 0, run.stderr);
      equal(read(dir, "a.txt"), "two\n");
      equal(read(dir, "bashmade.txt"), "made by bash");
      equal(mode(dir, "run.sh") & 0o100, 0o100);

      const records = await readRecords(sessionPath());
      const after = records.find((record) => record.kind === "after");
      ok(after?.kind === "after");
      const by = Object.fromEntries(after.changes.map((c) => [c.path, `${c.status} ${c.by}`]));
      deepEqual(by, {
        "a.txt": "modified tool",
        "new.txt": "added tool",
        "old.txt": "deleted command",
        "keep/x": "deleted command",
        "keep/y": "added command",
        "run.sh": "modified command",
        "bashmade.txt": "added command",
        "bin.dat": "modified command",
      });

      const [entry] = await userEntries();
      const preview = await tern(["sessions", "rewind", "-c", entry]);
      equal(preview.code, 0, preview.stderr);
      match(preview.stdout, /files: 8 to restore/);
      match(preview.stdout, /-two\n\+one/);
      equal(read(dir, "a.txt"), "two\n", "a preview changes nothing");

      // The checkpoint log is no second session: an id prefix names this one alone.
      const listed = JSON.parse((await tern(["sessions", "list", "--json"])).stdout);
      equal(listed.length, 1);
      const id = listed[0].id.slice(0, 8);
      const applied = await tern(["sessions", "rewind", id, entry, "--yes"]);
      equal(applied.code, 0, applied.stderr);
      equal(read(dir, "a.txt"), "one\n");
      equal(read(dir, "old.txt"), "old\n");
      equal(read(dir, "keep/x"), "kept\n");
      equal(read(dir, "keep/y"), undefined);
      equal(read(dir, "new.txt"), undefined);
      equal(read(dir, "bashmade.txt"), undefined);
      deepEqual(Deno.readFileSync(join(dir, "bin.dat")), BINARY);
      equal(mode(dir, "run.sh"), 0o644);
      // The conversation moved back: the leaf is before the first request.
      const session = await loadSession(sessionPath());
      const last = session.entries[session.entries.length - 1];
      equal(last.type, "branch");
      equal(last.parentId, session.entries.find((e) => e.id === entry)!.parentId);

      // A rewind is a checkpoint: undo brings the turn's files back.
      const undo = await tern(["sessions", "rewind", "-c", "undo", "--yes"]);
      equal(undo.code, 0, undo.stderr);
      equal(read(dir, "a.txt"), "two\n");
      equal(read(dir, "bashmade.txt"), "made by bash");
      equal(read(dir, "old.txt"), undefined);
      equal(mode(dir, "run.sh") & 0o100, 0o100);
    });
  },
);

testWith(
  [bwrapNeed],
  "tern sessions rewind never overwrites a file changed outside tern unless told",
  async () => {
    const tasks = {
      "first": [[call("write", { path: "a.txt", content: "by tern\n" })]],
      "second": [[call("bash", { command: "printf 'second' > b.txt" })]],
    };
    await withWorkspace(tasks, async ({ dir, tern, userEntries }) => {
      Deno.writeTextFileSync(join(dir, "a.txt"), "original\n");
      equal((await tern(["run", "first"])).code, 0);
      // The person edits the file between the turns.
      Deno.writeTextFileSync(join(dir, "a.txt"), "by the person\n");
      equal((await tern(["run", "-c", "second"])).code, 0);
      const [first] = await userEntries();

      const refused = await tern(["sessions", "rewind", "-c", first, "--yes"]);
      ok(refused.code !== 0);
      match(refused.stderr, /changed outside tern since then \("a\.txt"\)/);
      equal(read(dir, "a.txt"), "by the person\n");
      equal(read(dir, "b.txt"), "second", "a refused rewind changes nothing");

      const kept = await tern(["sessions", "rewind", "-c", first, "--yes", "--conflicts", "keep"]);
      equal(kept.code, 0, kept.stderr);
      equal(read(dir, "a.txt"), "by the person\n");
      equal(read(dir, "b.txt"), undefined);

      // The person's change after the last turn is a conflict too.
      Deno.writeTextFileSync(join(dir, "c.txt"), "later\n");
      const [, second] = await userEntries();
      const files = await tern([
        "sessions",
        "rewind",
        "-c",
        first,
        "--restore",
        "files",
        "--yes",
        "--conflicts",
        "overwrite",
      ]);
      equal(files.code, 0, files.stderr);
      equal(read(dir, "a.txt"), "original\n");
      equal(read(dir, "c.txt"), undefined);
      ok(second !== undefined);
    });
  },
);

testWith(
  [bwrapNeed],
  "tern sessions rewind restores files after tern was killed with SIGKILL mid-turn",
  async () => {
    const tasks = {
      "crash": [[
        call("bash", { command: "printf crashed > crashed.txt && rm a.txt && sleep 60" }),
      ]],
    };
    await withWorkspace(tasks, async ({ dir, tern, spawn, userEntries }) => {
      Deno.writeTextFileSync(join(dir, "a.txt"), "before\n");
      const child = spawn(["run", "crash"]);
      // Killed once the command surely ran (its file is there), while it sleeps.
      while (read(dir, "crashed.txt") !== "crashed" || read(dir, "a.txt") !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      child.kill("SIGKILL");
      await child.status;
      const [entry] = await userEntries();
      const rewound = await tern(["sessions", "rewind", "-c", entry, "--yes"]);
      equal(rewound.code, 0, rewound.stderr);
      equal(read(dir, "crashed.txt"), undefined);
      equal(read(dir, "a.txt"), "before\n");
    });
  },
);

testWith(
  [bwrapNeed],
  "tern sessions rewind goes back across a compaction, files and conversation",
  async () => {
    const tasks = {
      "one": [
        [call("write", { path: "a.txt", content: "one\n" })],
        [call("bash", { command: "seq 1 1000" })],
        [call("bash", { command: "seq 1001 2000" })],
        [call("bash", { command: "seq 2001 3000" })],
      ],
      "two": [[call("write", { path: "b.txt", content: "two\n" })]],
      "three": [],
    };
    await withWorkspace(tasks, async ({ dir, tern, userEntries, sessionPath }) => {
      equal((await tern(["run", "one"])).code, 0);
      const small = { TERN_CONTEXT_WINDOW: "16000", TERN_COMPACT_AT: "0.5" };
      const two = await tern(["run", "-c", "two"], small);
      equal(two.code, 0, two.stderr);
      const compacted = (await loadSession(sessionPath())).entries.some((e) =>
        e.type === "compaction"
      );
      ok(compacted, "the second turn compacted the first");
      equal(read(dir, "b.txt"), "two\n");
      const [first] = await userEntries();
      const rewound = await tern(["sessions", "rewind", "-c", first, "--yes"]);
      equal(rewound.code, 0, rewound.stderr);
      equal(read(dir, "a.txt"), undefined);
      equal(read(dir, "b.txt"), undefined);
      // The next turn starts from before the first request: no summary, no old messages.
      const three = await tern(["run", "-c", "-o", "json", "three"]);
      equal(three.code, 0, three.stderr);
      const session = await loadSession(sessionPath());
      const users = session.entries.filter((e) =>
        e.type === "message" && e.message.role === "user"
      );
      const last = users[users.length - 1];
      equal(last.type === "message" && last.message.content.startsWith("three"), true);
      const onPath: string[] = [];
      for (let id: string | null = last.id; id !== null;) {
        const entry = session.entries.find((e) => e.id === id)!;
        onPath.push(entry.type);
        id = entry.parentId;
      }
      ok(!onPath.includes("compaction"), onPath.join(","));
    });
  },
);

testWith(
  [bwrapNeed],
  "tern sessions rewind brings back a symlink the turn removed, with the other files",
  async () => {
    await withWorkspace({
      "unlink": [[call("bash", { command: "rm lnk; echo changed > a.txt; echo new > z.txt" })]],
    }, async (ws) => {
      await Deno.writeTextFile(join(ws.dir, "a.txt"), "orig\n");
      await Deno.writeTextFile(join(ws.dir, "target.txt"), "t\n");
      await Deno.symlink("target.txt", join(ws.dir, "lnk"));
      const run = await ws.tern(["run", "unlink"]);
      equal(run.code, 0, run.stderr);
      equal(read(ws.dir, "a.txt"), "changed\n");
      const [entry] = await ws.userEntries();
      const rewind = await ws.tern(["sessions", "rewind", "-c", entry, "--yes"]);
      equal(rewind.code, 0, rewind.stdout + rewind.stderr);
      equal(Deno.readLinkSync(join(ws.dir, "lnk")), "target.txt");
      equal(read(ws.dir, "a.txt"), "orig\n");
      equal(read(ws.dir, "z.txt"), undefined);
    });
  },
);

testWith(
  [bwrapNeed],
  "tern sessions rewind past a checkpoint that failed counts every file changed since as a conflict",
  async () => {
    // A hostile model makes the turn's end checkpoint fail (more files than the store takes),
    // so that tern would take the person's later edit for the turn's own and overwrite it.
    const tasks = {
      "flood": [[call("bash", {
        command: "echo model > a.txt && mkdir junk && cd junk && seq 1 100001 | xargs touch",
      })]],
    };
    await withWorkspace(tasks, async ({ dir, tern, userEntries, sessionPath }) => {
      Deno.writeTextFileSync(join(dir, "a.txt"), "orig-a\n");
      Deno.writeTextFileSync(join(dir, "b.txt"), "orig-b\n");
      const run = await tern(["run", "flood"]);
      equal(run.code, 0, run.stderr);
      match(run.stderr, /^tern: warning: checkpoints stopped in this session/m);
      const kinds = (await readRecords(sessionPath())).map((record) => record.kind);
      deepEqual(kinds, ["before", "failed"]);
      await Deno.remove(join(dir, "junk"), { recursive: true });
      Deno.writeTextFileSync(join(dir, "b.txt"), "person-edit\n");
      const [entry] = await userEntries();
      const preview = await tern(["sessions", "rewind", "-c", entry]);
      equal(preview.code, 0, preview.stderr);
      match(preview.stdout, /conflict: "b\.txt"/);
      const refused = await tern(["sessions", "rewind", "-c", entry, "--yes"]);
      equal(refused.code === 0, false, refused.stdout);
      equal(read(dir, "b.txt"), "person-edit\n");
      const kept = await tern(["sessions", "rewind", "-c", entry, "--yes", "--conflicts", "keep"]);
      equal(kept.code, 0, kept.stderr);
      equal(read(dir, "b.txt"), "person-edit\n", "the person's edit stays");
      equal(read(dir, "a.txt"), "model\n", "a file of the unrecorded stretch is a conflict too");
    });
  },
);

testWith(
  [bwrapNeed],
  "tern sessions rewind refuses a session whose header names another workspace than its folder's",
  async () => {
    const tasks = { "write it": [[call("write", { path: "a.txt", content: "by the model\n" })]] };
    await withWorkspace(tasks, async ({ dir, tern, userEntries, sessionPath }) => {
      Deno.writeTextFileSync(join(dir, "a.txt"), "mine\n");
      const run = await tern(["run", "write it"]);
      equal(run.code, 0, run.stderr);
      const [entry] = await userEntries();
      // The header edited to name another folder: the rewind would restore this session's
      // files there (and remove what it holds that this workspace did not).
      const victim = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-victim-" }));
      try {
        Deno.writeTextFileSync(join(victim, "precious.txt"), "keep me\n");
        const path = sessionPath();
        const [header, ...rest] = Deno.readTextFileSync(path).split("\n");
        const edited = { ...JSON.parse(header), cwd: victim };
        Deno.writeTextFileSync(path, [JSON.stringify(edited), ...rest].join("\n"));
        const applied = await tern(["sessions", "rewind", path, entry, "--yes"]);
        equal(applied.code, 2, applied.stderr + applied.stdout);
        match(
          applied.stderr,
          /its header names the workspace ".*tern-victim-[^"]*", whose sessions/,
        );
        deepEqual([...Deno.readDirSync(victim)].map((e) => e.name), ["precious.txt"]);
        equal(read(victim, "precious.txt"), "keep me\n");
        equal(read(dir, "a.txt"), "by the model\n");
      } finally {
        await Deno.remove(victim, { recursive: true });
      }
    });
  },
);

testWith(
  [bwrapNeed],
  "tern sessions rewind changes nothing when a folder of files it cannot restore stands where a file goes back",
  async () => {
    const tasks = {
      "make a folder": [
        [call("write", { path: "a.txt", content: "MODIFIED\n" })],
        [call("bash", { command: "rm cfg && mkdir cfg && echo x > cfg/debug.log" })],
      ],
    };
    await withWorkspace(tasks, async ({ dir, tern, userEntries }) => {
      Deno.writeTextFileSync(join(dir, "a.txt"), "orig\n");
      Deno.writeTextFileSync(join(dir, "cfg"), "origcfg\n");
      // The folder's file is ignored: no checkpoint holds it.
      Deno.writeTextFileSync(join(dir, ".gitignore"), "cfg/*.log\n");
      const run = await tern(["run", "make a folder"]);
      equal(run.code, 0, run.stderr);
      const [entry] = await userEntries();
      const refused = await tern(["sessions", "rewind", "-c", entry, "--yes"]);
      equal(refused.code, 1, refused.stderr);
      match(refused.stderr, /"cfg" is a folder with files in it where a file goes back/);
      match(refused.stderr, /Nothing was changed/);
      // Not half-restored: the file before it in the restore's order is as the model left it.
      equal(read(dir, "a.txt"), "MODIFIED\n");
      ok(Deno.statSync(join(dir, "cfg")).isDirectory);
      // With the folder gone, the same rewind restores both.
      Deno.removeSync(join(dir, "cfg"), { recursive: true });
      const applied = await tern(["sessions", "rewind", "-c", entry, "--yes"]);
      equal(applied.code, 0, applied.stderr);
      equal(read(dir, "a.txt"), "orig\n");
      equal(read(dir, "cfg"), "origcfg\n");
    });
  },
);

testWith(
  [bwrapNeed],
  "FIFOs a command names .gitignore and .gitattributes stall no checkpoint, and a rewind works",
  async () => {
    const tasks = {
      "make fifos": [
        [call("bash", {
          command: "mkdir -p sub && mkfifo sub/.gitignore .gitattributes && " +
            "printf 'made' > sub/made.txt",
        })],
        [call("write", { path: "after.txt", content: "written after\n" })],
      ],
      "again": [[call("edit", { path: "a.txt", old_string: "one", new_string: "two" })]],
    };
    await withWorkspace(tasks, async ({ dir, tern, userEntries }) => {
      Deno.writeTextFileSync(join(dir, "a.txt"), "one\n");
      const run = await tern(["run", "make fifos"]);
      equal(run.code, 0, run.stderr);
      ok(!/checkpoint|timed out/i.test(run.stderr), run.stderr);
      const again = await tern(["run", "-c", "again"]);
      equal(again.code, 0, again.stderr);
      ok(!/checkpoint|timed out/i.test(again.stderr), again.stderr);
      equal(read(dir, "a.txt"), "two\n");

      const [first] = await userEntries();
      const applied = await tern(["sessions", "rewind", "-c", first, "--yes"]);
      equal(applied.code, 0, applied.stderr);
      equal(read(dir, "a.txt"), "one\n");
      equal(read(dir, "after.txt"), undefined);
      equal(read(dir, "sub/made.txt"), undefined);
    });
  },
);

testWith(
  [bwrapNeed],
  "files named as git cannot store are told once, and a rewind leaves them as they are",
  async () => {
    const tasks = {
      "odd names": [[call("bash", {
        command: "mkdir .GIT && printf x > .GIT/x && printf x > git~1 && " +
          `printf x > "$(printf 'bad\\377name')" && printf x > plain.txt`,
      })]],
      "again": [[call("bash", { command: "printf y > plain2.txt" })]],
    };
    await withWorkspace(tasks, async ({ dir, tern, userEntries }) => {
      const run = await tern(["run", "odd names"]);
      equal(run.code, 0, run.stderr);
      match(run.stderr, /checkpoints leave out files whose names git cannot store/);
      match(run.stderr, /"\.GIT\/x"/);
      match(run.stderr, /"bad\uFFFDname"/);
      match(run.stderr, /"git~1"/);
      const again = await tern(["run", "-c", "again"]);
      equal(again.code, 0, again.stderr);
      const [first] = await userEntries();
      const applied = await tern(["sessions", "rewind", "-c", first, "--yes"]);
      equal(applied.code, 0, applied.stderr);
      equal(read(dir, "plain.txt"), undefined);
      equal(read(dir, "plain2.txt"), undefined);
      equal(read(dir, ".GIT/x"), "x");
      equal(read(dir, "git~1"), "x");
      ok([...Deno.readDirSync(dir)].some((entry) => entry.name.startsWith("bad")));
    });
  },
);
