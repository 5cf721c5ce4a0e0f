/**
 * End-to-end: a session recorded under `--mode bypass -s :danger-full-access`, continued by
 * `tern rpc` and `tern run` that ask for less. Resuming and forking keep the run's narrower
 * settings and say so; a command the model sends outside the workspace does not run.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { type LineProcess, spawnLineProcess } from "../support/line_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

type Line = Record<string, unknown>;

/** Each user message gets `touch <outside>/<message>`; each tool result, a last answer. */
function touching(outside: string) {
  return (request: ModelRequest): ScriptedReply => {
    const last = request.messages.at(-1)!;
    if (last.role !== "user") return { text: "done" };
    const command = `touch ${join(outside, String(last.content))} && id`;
    return { toolCalls: [{ id: "t", name: "bash", arguments: JSON.stringify({ command }) }] };
  };
}

/** A workspace, an outside folder and a session made there in bypass with full access. */
async function withBypassSession(
  body: (bench: {
    dir: string;
    outside: string;
    env: Record<string, string>;
    baseUrl: string;
    id: string;
  }) => Promise<void>,
): Promise<void> {
  const ws = await tempWorkspace();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-outside-" }));
  try {
    await withScriptedServer(touching(outside), async (server) => {
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
      const first = await runTern([
        ...["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json"],
        ...["--mode", "bypass", "-s", ":danger-full-access", "first"],
      ], { cwd: ws.dir, env });
      equal(first.code, 0, first.stderr);
      // The first run did what it was allowed: the later runs' refusals are theirs.
      ok(await exists(join(outside, "first")), "bypass with full access ran the command");
      const id = JSON.parse(first.stdout).session as string;
      await body({ dir: ws.dir, outside, env, baseUrl: server.baseUrl, id });
    });
  } finally {
    await Deno.remove(outside, { recursive: true });
    await ws.cleanup();
  }
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

async function ask(rpc: LineProcess, command: Line): Promise<Line> {
  await rpc.send(command);
  return await rpc.waitFor((line) => line.type === "response" && line.id === command.id);
}

async function settings(rpc: LineProcess, id: string): Promise<[unknown, unknown]> {
  const state = (await ask(rpc, { type: "get_state", id })).data as Line;
  return [state.mode, state.profile];
}

/** Sends `message` as a prompt, denies what it asks, and returns the turn's response. */
async function promptDenying(rpc: LineProcess, id: string, message: string): Promise<Line> {
  let after = rpc.lines.length;
  await rpc.send({ type: "prompt", id, message });
  for (;;) {
    const line = await rpc.waitFor(
      (line) => line.type === "permission_request" || (line.type === "response" && line.id === id),
      after,
    );
    if (line.type === "response") return line;
    after = rpc.lines.indexOf(line) + 1;
    await rpc.send({ type: "answer_permission", requestId: line.requestId, answer: "deny" });
  }
}

testWith(
  [bwrapNeed],
  "tern rpc fork keeps the command line's ask mode and :read-only over a bypass session",
  async () => {
    await withBypassSession(async ({ dir, outside, env, baseUrl, id }) => {
      const rpc = spawnLineProcess([
        ...["rpc", "--base-url", baseUrl, "-m", "scripted", "-r", id],
        ...["--mode", "ask", "-s", ":read-only"],
      ], { cwd: dir, env });
      try {
        await rpc.waitFor((line) => line.type === "ready");
        deepEqual(await settings(rpc, "s1"), ["ask", ":read-only"]);
        const forked = await ask(rpc, { type: "fork", id: "f" });
        equal(forked.ok, true, JSON.stringify(forked));
        deepEqual(await settings(rpc, "s2"), ["ask", ":read-only"]);
        const done = await promptDenying(rpc, "p", "after-fork");
        equal(done.ok, true, JSON.stringify(done));
        equal(await exists(join(outside, "after-fork")), false, "the command ran after the fork");
        const { code } = await rpc.finish();
        equal(code, 0);
      } finally {
        await rpc.kill().catch(() => {});
      }
    });
  },
);

testWith(
  [bwrapNeed],
  "tern rpc -r and fork without flags keep a bypass session's settings out and say so",
  async () => {
    await withBypassSession(async ({ dir, outside, env, baseUrl, id }) => {
      const rpc = spawnLineProcess(
        ["rpc", "--base-url", baseUrl, "-m", "scripted", "-r", id],
        { cwd: dir, env },
      );
      let stderr = "";
      try {
        await rpc.waitFor((line) => line.type === "ready");
        deepEqual(await settings(rpc, "s1"), ["ask", ":workspace"]);
        const forked = await ask(rpc, { type: "fork", id: "f" });
        const note = String((forked.data as Line).note);
        match(note, /Kept mode "ask": the session ran with mode "bypass".*--mode bypass/);
        match(note, /Kept profile ":workspace": .*":danger-full-access"/);
        deepEqual(await settings(rpc, "s2"), ["ask", ":workspace"]);
        await promptDenying(rpc, "p", "after-fork");
        equal(await exists(join(outside, "after-fork")), false, "the command ran after the fork");
        ({ stderr } = await rpc.finish());
      } finally {
        await rpc.kill().catch(() => {});
      }
      // Opening said it too.
      match(stderr, /warning: Kept mode "ask": the session ran with mode "bypass"/);
      match(stderr, /warning: Kept profile ":workspace"/);
    });
  },
);

testWith(
  [bwrapNeed],
  "tern run -r takes TERN_MODE and TERN_PROFILE over a bypass session and says so",
  async () => {
    await withBypassSession(async ({ dir, outside, env, baseUrl, id }) => {
      const resumed = await runTern(
        ["run", "--base-url", baseUrl, "-m", "scripted", "-r", id, "again"],
        { cwd: dir, env: { ...env, TERN_MODE: "ask", TERN_PROFILE: ":read-only" } },
      );
      equal(resumed.code, 0, resumed.stderr);
      equal(await exists(join(outside, "again")), false, "the resumed run ran the command");
      match(resumed.stderr, /Kept mode "ask": the session ran with mode "bypass"/);
      match(resumed.stderr, /Kept profile ":read-only": the session ran with profile/);
    });
  },
);
