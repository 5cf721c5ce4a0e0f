/**
 * The audit log fails closed: while it cannot be written (its disk is full), no tool call runs,
 * the model is told why and the person once; once it can be written again, calls run again and
 * the held records are written first, in order.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

/** Whether this machine lets us mount a tmpfs in a mount namespace of our own. */
function canMountTmpfs(): boolean {
  try {
    return new Deno.Command("unshare", {
      args: ["--mount", "--map-root-user", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}

/** Whether `path` exists. */
function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `script` with `$1` set to tern's process id and `$2` to its audit folder, and returns its
 * output: tern's mount namespace is seen under /proc/<pid>/root, which Deno reads (or names in
 * a command line) only with --allow-all.
 */
function shell(script: string, pid: number, dir: string): string {
  const out = new Deno.Command("sh", { args: ["-c", script, "sh", `${pid}`, dir] }).outputSync();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

interface ToolEnd {
  type: string;
  callId: string;
  observation: { status: string; message?: string };
}

interface FullRun {
  code: number;
  stdout: string;
  stderr: string;
  ends: Map<string, ToolEnd>;
}

/**
 * `tern run` (events as JSON lines) with a 64 KiB tmpfs over its audit folder, filled: the audit
 * file opens, and writes to it fail. `started` gets tern's process id.
 */
async function runOnFullDisk(
  ws: { dir: string; home: string },
  baseUrl: string,
  started: (pid: number) => void,
): Promise<FullRun> {
  const auditDir = join(ws.home, "audit");
  await Deno.mkdir(auditDir);
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  const args = scriptedRunArgs(baseUrl, "touch files", false);
  args.splice(-1, 0, "-o", "stream-json");
  const fill = 'mount -t tmpfs -o size=64k tmpfs "$1" && ' +
    '{ head -c 1048576 /dev/zero > "$1/fill"; true; } 2>/dev/null && shift && exec "$@"';
  const child = new Deno.Command("unshare", {
    args: [
      "--mount",
      "--map-root-user",
      "sh",
      "-c",
      fill,
      "sh",
      auditDir,
      Deno.execPath(),
      "run",
      ...declaredFlags(env, { cwd: ws.dir, args }),
      join(ROOT, "main.ts"),
      ...args,
    ],
    cwd: ws.dir,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  started(child.pid);
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout);
  const ends = new Map(
    stdout.split("\n").filter((line) => line.startsWith("{")).map((line) =>
      JSON.parse(line) as ToolEnd
    ).filter((event) => event.type === "tool_end").map((event) => [event.callId, event]),
  );
  return { code: out.code, stdout, stderr: new TextDecoder().decode(out.stderr), ends };
}

function bash(id: string, file: string) {
  return {
    toolCalls: [{ id, name: "bash", arguments: JSON.stringify({ command: `touch ${file}` }) }],
  };
}

const REFUSAL =
  /^Cannot run "(bash|write)": the audit log ".*\/audit\/.*\.jsonl" cannot be written \(No space left on device.*\).*free space on that disk or make that folder writable/;

Deno.test({
  name:
    "tern run runs no tool call while its audit log's disk is full, and runs them once it has room",
  ignore: !canMountTmpfs(),
  fn: async () => {
    const ws = await tempWorkspace();
    const auditDir = join(ws.home, "audit");
    let pid = 0;
    let records = "";
    const script = (request: ModelRequest) => {
      const results = request.messages.filter((m) => m.role === "tool").length;
      if (results === 0) return bash("c1", "one");
      if (results === 1) return bash("c2", "two");
      if (results === 2) {
        shell(`rm "/proc/$1/root$2/fill"`, pid, auditDir);
        return bash("c3", "three");
      }
      records = shell(`cat "/proc/$1/root$2"/*.jsonl`, pid, auditDir);
      return { text: "done" };
    };
    const server = await startScriptedServer(script, { chunkDelayMs: 0 });
    try {
      const { code, stdout, stderr, ends } = await runOnFullDisk(ws, server.baseUrl, (id) => {
        pid = id;
      });
      // The first call ran; its record could not be written, so the second did not run.
      ok(exists(join(ws.dir, "one")), stderr);
      ok(!exists(join(ws.dir, "two")), "the call ran though its audit log could not be written");
      const refused = ends.get("c2")?.observation;
      equal(refused?.status, "ERROR", stdout);
      match(refused?.message ?? "", REFUSAL);
      // Told once on stderr, however many calls were refused.
      equal(stderr.split("Cannot write the audit log").length - 1, 1, stderr);
      // With room again, calls run, and the held record is written before the next one's.
      ok(exists(join(ws.dir, "three")), stderr);
      equal(ends.get("c3")?.observation.status, "SUCCEEDED", stdout);
      const ids = records.trim().split("\n").map((line) => JSON.parse(line).callId);
      equal(ids[0], "c1", records);
      ok(!ids.includes("c2"), records);
      equal(code, 0, stderr);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
});

Deno.test({
  name:
    "tern run refuses every tool while its audit log stays unwritable, and says records were lost",
  ignore: !canMountTmpfs(),
  fn: async () => {
    const ws = await tempWorkspace();
    const write = {
      toolCalls: [{ id: "c3", name: "write", arguments: '{"path":"three","content":"x"}' }],
    };
    const script = (request: ModelRequest) => {
      const results = request.messages.filter((m) => m.role === "tool").length;
      return [bash("c1", "one"), bash("c2", "two"), write][results] ?? { text: "done" };
    };
    const server = await startScriptedServer(script, { chunkDelayMs: 0 });
    try {
      const { stdout, stderr, ends } = await runOnFullDisk(ws, server.baseUrl, () => {});
      ok(exists(join(ws.dir, "one")), stderr);
      ok(!exists(join(ws.dir, "two")), stderr);
      ok(!exists(join(ws.dir, "three")), stderr);
      for (const id of ["c2", "c3"]) {
        match(ends.get(id)?.observation.message ?? "", REFUSAL, stdout);
      }
      equal(stderr.split("Cannot write the audit log").length - 1, 1, stderr);
      match(stderr, /1 audit record\(s\) of this run were not written to ".*\/audit\/.*\.jsonl"/);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
});
