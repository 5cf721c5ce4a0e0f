/**
 * End-to-end bounds of a run: the real `tern run` against the scripted model server. A
 * catastrophic regex ends in time, a deeply nested argument is refused, and when tern dies
 * (SIGKILL, SIGTERM, SIGHUP) mid-command nothing it started lives on; the private tmp folder
 * the killed run left is removed by the next run.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import {
  declaredFlags,
  ROOT,
  runTern,
  scriptedRunArgs,
  tempWorkspace,
} from "../support/tern_process.ts";
import { processesMatching } from "../support/tmux.ts";
import { bwrap } from "../sandbox/_bwrap_helpers.ts";

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

/** A catastrophic pattern for a backtracking engine, and a line that makes it explode. */
const REDOS_PATTERN = "(a+)+$";
const REDOS_LINE = `${"a".repeat(40)}b\n`;

interface Place {
  ws: string;
  home: string;
  /** tern's TMPDIR: where its private tmp folders go. */
  tmp: string;
  env: Record<string, string>;
}

async function withPlace(fn: (place: Place) => Promise<void>): Promise<void> {
  const ws = await tempWorkspace();
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bounded-tmp-" }));
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test", TMPDIR: tmp };
    await fn({ ws: ws.dir, home: ws.home, tmp, env });
  } finally {
    await ws.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
}

/** The tool results the model was sent, in order. */
function toolResults(requests: { body: { messages?: unknown[] } }[]): string[] {
  const last = requests.at(-1)?.body.messages ?? [];
  return last.flatMap((message) => {
    const { role, content } = message as { role: string; content: unknown };
    return role === "tool" ? [typeof content === "string" ? content : JSON.stringify(content)] : [];
  });
}

Deno.test("tern run answers a catastrophic grep in linear time, well within the tool time limit", async () => {
  await withPlace(async (place) => {
    await Deno.writeTextFile(join(place.ws, "victim.txt"), REDOS_LINE);
    await Deno.writeTextFile(
      join(place.home, "config.jsonc"),
      `{ "limits": { "toolSeconds": 3 } }`,
    );
    const server = await startScriptedServer([
      call("grep", { pattern: REDOS_PATTERN, path: "victim.txt" }, "c0"),
      call("read", { path: "victim.txt" }, "c1"),
      { text: "done" },
    ], { chunkDelayMs: 0 });
    try {
      const run = await runTern(
        scriptedRunArgs(server.baseUrl, "go", false),
        { cwd: place.ws, env: place.env },
      );
      equal(run.code, 0, run.stderr);
      const [grep, read] = toolResults(server.requests);
      // A backtracking engine would still be at it when the 3 s limit ends the call.
      match(grep, /No matches for "\(a\+\)\+\$"/);
      match(read, /aaaab/);
    } finally {
      await server.close();
    }
  });
});

Deno.test("tern run refuses an argument nested 10,000 deep as INVALID_ARGUMENTS", async () => {
  await withPlace(async (place) => {
    const deep = `{"path": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    const deepObject = `{"pattern": "x", "path": ${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`;
    const server = await startScriptedServer([
      { toolCalls: [{ id: "c0", name: "read", arguments: deep }] },
      { toolCalls: [{ id: "c1", name: "grep", arguments: deepObject }] },
      { text: "done" },
    ], { chunkDelayMs: 0 });
    try {
      // A window wide enough that the long arguments do not start a compaction.
      const env = { ...place.env, TERN_CONTEXT_WINDOW: "4000000" };
      const run = await runTern(
        scriptedRunArgs(server.baseUrl, "go", false),
        { cwd: place.ws, env },
      );
      equal(run.code, 0, run.stderr);
      const results = toolResults(server.requests);
      equal(results.length, 2, JSON.stringify(results).slice(0, 500));
      for (const result of results) match(result, /INVALID_ARGUMENTS|nested/i);
    } finally {
      await server.close();
    }
  });
});

for (const signal of ["SIGKILL", "SIGTERM", "SIGHUP"] as const) {
  Deno.test({
    name: `tern run killed by ${signal} mid-command leaves no sandbox or command behind`,
    ignore: !bwrap.ok,
    fn: () => killedMidCall(signal),
  });
}

/**
 * Kills tern with `signal` while a command runs. (A worker stuck in a call dies with its host
 * too: tests/sandbox/worker_test.ts.)
 */
async function killedMidCall(signal: Deno.Signal): Promise<void> {
  await withPlace(async (place) => {
    await Deno.writeTextFile(join(place.ws, "victim.txt"), REDOS_LINE);
    const mark = `tern_orphan_${crypto.randomUUID().slice(0, 8)}`;
    // A command that ignores SIGTERM and SIGHUP and leaves a background job.
    const command = `trap '' TERM HUP; (sleep 600; : ${mark}) & sleep 601; : ${mark}`;
    const args = { command };
    const server = await startScriptedServer([call("bash", args, "c0"), { text: "never" }], {
      chunkDelayMs: 0,
    });
    const argv = scriptedRunArgs(server.baseUrl, "go", false);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...declaredFlags(place.env, { cwd: place.ws, args: argv }),
        join(ROOT, "main.ts"),
        ...argv,
      ],
      cwd: place.ws,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...place.env },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const left = async () => [
      ...await processesMatching(mark),
      ...(await processesMatching(place.ws)).filter((line) => /deno|setpriv|bwrap/.test(line)),
    ];
    try {
      // The call is under way: the command (its marker) runs.
      await until(async () => (await processesMatching(mark)).length >= 2);
      const tmpBefore = await tmpFolders(place.tmp);
      equal(tmpBefore.length, 1);
      child.kill(signal);
      await child.status;
      let remaining: string[] = [];
      await until(async () => (remaining = await left()).length === 0, () => remaining.join("\n"));
      if (signal !== "SIGKILL") {
        // SIGTERM and SIGHUP cancel the turn: the sandbox closed, its tmp folder is gone.
        deepEqual(await tmpFolders(place.tmp), []);
      }
      if (signal === "SIGKILL") {
        // The dead run's tmp folder is there still; the next run removes it (once it is older
        // than a fresh one could be).
        const [stale] = await tmpFolders(place.tmp);
        equal(stale, tmpBefore[0]);
        const old = new Date(Date.now() - 3_600_000);
        await Deno.utime(join(place.tmp, stale), old, old);
        // A run that opens its sandbox (a tool call) sweeps when its sandbox closes.
        const next = await startScriptedServer([
          call("read", { path: "victim.txt" }, "c0"),
          { text: "ok" },
        ], { chunkDelayMs: 0 });
        try {
          const run = await runTern(
            scriptedRunArgs(next.baseUrl, "hello", false),
            { cwd: place.ws, env: place.env },
          );
          equal(run.code, 0, run.stderr);
        } finally {
          await next.close();
        }
        equal((await tmpFolders(place.tmp)).length, 0);
      }
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone already.
      }
      await child.status;
      await server.close();
    }
  });
}

async function tmpFolders(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("tern-tmp-")) names.push(entry.name);
  }
  return names;
}

/**
 * Polls `condition` until it holds; fails after a minute (nothing here should take that long),
 * saying what `state` then describes.
 */
async function until(condition: () => Promise<boolean>, state = () => ""): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  ok(false, `the condition did not come true within a minute: ${state()}`);
}
