/**
 * End-to-end: a `tern sessions rewind --yes` signalled while its restore process writes the
 * files. SIGINT, SIGTERM and SIGHUP wait for the restore to end (the files are wholly as the
 * checkpoint had them); after SIGKILL the files are a mix, and the next `tern sessions rewind`
 * and `tern run -c` say so, naming the commands that finish the rewind or undo it, and both
 * commands bring the files back to one checkpoint. Real turns against the scripted model server
 * make the files, the real store keeps them, a real restore process (in bubblewrap) writes them.
 */
import { deepEqual, doesNotMatch, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { readRecords } from "../../src/harness/rewind/records.ts";
import { loadSession } from "../../src/session/load.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import {
  declaredFlags,
  ROOT,
  runTern,
  runTernWithInput,
  tempWorkspace,
} from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

/** Files each turn writes: enough that the restore takes well over a second. */
const FILES = 3000;

/** Turn "one" writes every file as v1, turn "two" as v2, "three" does nothing. */
function script(request: ModelRequest): ScriptedReply {
  const users = request.messages.filter((m) => m.role === "user");
  const task = users[users.length - 1].content.split("\n")[0];
  const answered = request.messages.at(-1)?.role === "tool";
  const version = task === "one" ? "v1" : task === "two" ? "v2" : undefined;
  if (version === undefined || answered) return { text: `done: ${task}` };
  const command = `mkdir -p d; for i in $(seq ${FILES}); do echo ${version}-$i > d/f$i; done; ` +
    `echo mine-${version} > notes.txt`;
  return {
    toolCalls: [{ id: `call_${task}`, name: "bash", arguments: JSON.stringify({ command }) }],
  };
}

interface Workspace {
  /** The workspace, and tern's environment there. */
  cwd: string;
  env: Record<string, string>;
  sessionPath: string;
  sessionId: string;
  /** The user entries, oldest first. */
  entries: string[];
}

/** Two turns (v1, then v2) in a new workspace; `body` runs with the session they made. */
async function withTwoTurns(body: (ws: Workspace) => Promise<void>): Promise<void> {
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
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
  try {
    for (const [i, task] of ["one", "two"].entries()) {
      const run = await runTern(["run", ...(i > 0 ? ["-c"] : []), task], { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
    }
    const folder = join(
      ws.home,
      "sessions",
      [...Deno.readDirSync(join(ws.home, "sessions"))][0].name,
    );
    const file = [...Deno.readDirSync(folder)].find((e) => /_[0-9a-f-]+\.jsonl$/.test(e.name))!;
    const session = await loadSession(join(folder, file.name));
    const entries = session.entries.flatMap((entry) =>
      entry.type === "message" && entry.message.role === "user" ? [entry.id] : []
    );
    await body({
      cwd: ws.dir,
      env,
      sessionPath: join(folder, file.name),
      sessionId: session.header.id,
      entries,
    });
  } finally {
    await server.close();
    await ws.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
}

/** How many of the files hold each version, and what notes.txt holds. */
function versions(dir: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 1; i <= FILES; i++) {
    const version = Deno.readTextFileSync(join(dir, "d", `f${i}`)).split("-")[0];
    counts[version] = (counts[version] ?? 0) + 1;
  }
  const notes = Deno.readTextFileSync(join(dir, "notes.txt")).trim();
  counts[notes] = 1;
  return counts;
}

/** Temporary files of a restore in d/ (one killed between a write and its rename leaves one). */
function scratch(dir: string): string[] {
  return [...Deno.readDirSync(join(dir, "d"))].map((e) => e.name).filter((name) =>
    name.startsWith(".tern-rewind-")
  );
}

const allOf = (version: string) => ({ [version]: FILES, [`mine-${version}`]: 1 });

/** The pids below `pid` whose command line holds the restore process's entry, now. */
function restoreProcesses(pid: number): number[] {
  const ps = new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,args="] }).outputSync();
  const rows = new TextDecoder().decode(ps.stdout).split("\n").flatMap((line) => {
    const found = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    return found ? [{ pid: Number(found[1]), ppid: Number(found[2]), args: found[3] }] : [];
  });
  const below = [pid];
  for (let i = 0; i < below.length; i++) {
    for (const row of rows) if (row.ppid === below[i]) below.push(row.pid);
  }
  return rows.filter((row) =>
    below.includes(row.pid) && /restore_main|rewind-restore/.test(row.args)
  )
    .map((row) => row.pid);
}

/** Waits (up to 60 s) until `condition` holds, looking every 5 ms. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Runs `tern sessions rewind -c <target> --yes` in a process group of its own (as a shell runs
 * a command in a terminal) and, once its restore process runs and has changed the first file
 * (`first` reads its version), sends `signal` to its group (the terminal's Ctrl-C and hangup
 * reach every process in it) or to tern alone (`kill`).
 */
async function signalledRewind(
  ws: Workspace,
  target: string,
  signal: Deno.Signal,
  first: () => string,
) {
  const before = first();
  const args = ["sessions", "rewind", "-c", target, "--yes"];
  const child = new Deno.Command("setsid", {
    args: [
      Deno.execPath(),
      "run",
      ...declaredFlags(ws.env, { cwd: ws.cwd, args }),
      join(ROOT, "main.ts"),
      ...args,
    ],
    cwd: ws.cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...ws.env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  await until(() => restoreProcesses(child.pid).length > 0 && first() !== before, "the restore");
  Deno.kill(signal === "SIGINT" || signal === "SIGHUP" ? -child.pid : child.pid, signal);
  const out = await output;
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

testWith(
  [bwrapNeed],
  "tern sessions rewind ends its restore when SIGINT, SIGTERM or SIGHUP comes during it",
  async () => {
    await withTwoTurns(async (ws) => {
      deepEqual(versions(ws.cwd), allOf("v2"));
      const first = () => Deno.readTextFileSync(join(ws.cwd, "d", "f1")).trim();
      const rounds: [string, Deno.Signal, string][] = [
        [ws.entries[1], "SIGINT", "v1"],
        ["undo", "SIGTERM", "v2"],
        ["undo", "SIGHUP", "v1"],
      ];
      for (const [target, signal, version] of rounds) {
        const rewind = await signalledRewind(ws, target, signal, first);
        equal(rewind.code, 0, `${signal}: ${rewind.stderr}`);
        match(rewind.stderr, /finishing the rewind first/);
        match(rewind.stdout, new RegExp(`${FILES + 1} file\\(s\\) written`));
        deepEqual(versions(ws.cwd), allOf(version), signal);
        // Its start and its end are both recorded, under one id.
        const [start, end] = (await readRecords(ws.sessionPath)).slice(-2);
        ok(start.kind === "rewind-start" && end.kind === "rewind", JSON.stringify([start, end]));
        equal(start.id, end.id);
      }
    });
  },
);

testWith(
  [bwrapNeed],
  "a rewind killed partway is told by the next tern sessions rewind and tern run -c, and undone",
  async () => {
    await withTwoTurns(async (ws) => {
      const first = () => Deno.readTextFileSync(join(ws.cwd, "d", "f1")).trim();
      const killed = await signalledRewind(ws, ws.entries[1], "SIGKILL", first);
      equal(killed.code, 137);
      equal((await readRecords(ws.sessionPath)).at(-1)?.kind, "rewind-start", "no end recorded");
      const mixed = versions(ws.cwd);
      ok(mixed.v1 > 0 && mixed.v2 > 0, `a mix of both: ${JSON.stringify(mixed)}`);
      const finish = `tern sessions rewind ${ws.sessionId} ${ws.entries[1]} --yes`;
      const undo = `tern sessions rewind ${ws.sessionId} undo --yes`;

      // A preview says so, and changes nothing.
      const preview = await runTern(["sessions", "rewind", "-c", ws.entries[1]], ws);
      equal(preview.code, 0, preview.stderr);
      match(preview.stderr, /was stopped partway: the workspace's files are partly restored/);
      ok(preview.stderr.includes(`Finish it with \`${finish}\``), preview.stderr);
      ok(preview.stderr.includes(`as they were before it with \`${undo}\``), preview.stderr);
      // The files it restored are its own: no conflict.
      const head = preview.stdout.slice(0, preview.stdout.indexOf("\n\n"));
      match(head, new RegExp(`^files: ${mixed.v2 + 1 + scratch(ws.cwd).length} to restore$`, "m"));
      doesNotMatch(preview.stdout, /conflict/);
      deepEqual(versions(ws.cwd), mixed);

      // Undone: every file back as it was before the rewind.
      const undone = await runTern(["sessions", "rewind", "-c", "undo", "--yes"], ws);
      equal(undone.code, 0, undone.stderr);
      deepEqual(versions(ws.cwd), allOf("v2"));
      const told = await runTern(["sessions", "rewind", "-c", ws.entries[1]], ws);
      doesNotMatch(told.stderr, /stopped partway/);

      // Killed again; `tern run -c` warns before its turn; finishing it gives the checkpoint.
      const again = await signalledRewind(ws, ws.entries[1], "SIGKILL", first);
      equal(again.code, 137);
      // The interactive session (in line mode here: its input is a pipe) shows it when it opens.
      const opened = await runTernWithInput(["-c"], "", ws);
      equal(opened.code, 0, opened.stderr);
      match(opened.stdout + opened.stderr, /stopped partway/);
      const resumed = await runTern(["run", "-c", "three"], ws);
      equal(resumed.code, 0, resumed.stderr);
      match(
        resumed.stderr,
        /tern: warning: The rewind to before entry "[0-9a-f]{8}".*stopped partway/,
      );
      ok(resumed.stderr.includes(finish), resumed.stderr);
      const finished = await runTern(["sessions", "rewind", "-c", ws.entries[1], "--yes"], ws);
      equal(finished.code, 0, finished.stderr);
      deepEqual(versions(ws.cwd), allOf("v1"));
      deepEqual(scratch(ws.cwd), [], "the killed restore's temporary files are gone");
      // Its undo goes back past the mix, to the files before the rewind that was stopped.
      const back = await runTern(["sessions", "rewind", "-c", "undo", "--yes"], ws);
      equal(back.code, 0, back.stderr);
      doesNotMatch(back.stderr, /stopped partway/);
      deepEqual(versions(ws.cwd), allOf("v2"));
    });
  },
);
