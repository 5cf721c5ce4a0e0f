/**
 * A compaction's checkpoint is read as strictly as the entries it stands for: a permission
 * change or plan record in it that its own entry could not hold (a damaged or hand-made file)
 * makes the checkpoint unusable, so neither replay nor a resume restores it, and a resumed
 * run's first tool call does not end in an internal error.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { replay } from "../../src/session/replay.ts";
import { Session } from "../../src/session/session.ts";
import type { SessionEntry } from "../../src/session/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { tempHome, userMessage } from "./_helpers.ts";

const T = "2026-12-01T00:00:00.000Z";
const USAGE = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0 };

/** Checkpoints whose lists hold what no `permission` or `plan` entry may. */
const DAMAGED: Record<string, Record<string, unknown>> = {
  "a grant without its paths": { permissions: [{ kind: "grant" }] },
  "a grant's paths a string": {
    permissions: [{
      kind: "grant",
      extra: { read: "/", write: [], net: [], env: [] },
      keys: [],
      withoutSandbox: false,
    }],
  },
  "an approval without a key": { permissions: [{ kind: "approval", key: 7 }] },
  "a change of no kind": { permissions: [{ what: "everything" }] },
  "a plan record not an object": { permissions: [], plan: ["x", null] },
};

function compaction(checkpoint: Record<string, unknown>, parentId: string): SessionEntry {
  return {
    type: "compaction",
    id: "c0000001",
    parentId,
    timestamp: T,
    summary: "s",
    firstKeptId: null,
    tokensBefore: 10,
    tokensAfter: 1,
    fallback: false,
    checkpoint: { usage: USAGE, fallbacks: [], compactions: 0, ...checkpoint },
  } as unknown as SessionEntry;
}

Deno.test("replay() does not take a checkpoint whose permissions or plan are malformed", () => {
  const approval = {
    type: "permission",
    id: "a0000002",
    parentId: "a0000001",
    timestamp: T,
    change: { kind: "approval", key: "bash:ls" },
  } as SessionEntry;
  const first = {
    ...userMessage("hi"),
    id: "a0000001",
    parentId: null,
    timestamp: T,
  } as SessionEntry;
  for (const [why, checkpoint] of Object.entries(DAMAGED)) {
    const state = replay([first, approval, compaction(checkpoint, "a0000002")]);
    // The path's own changes stand; nothing of the damaged checkpoint is restored.
    deepEqual(state.permissions, [{ kind: "approval", key: "bash:ls" }], why);
    equal(state.plan, undefined, why);
  }
});

Deno.test("Session.open() restores no malformed grant from a compaction's checkpoint", async () => {
  const { home, cleanup } = await tempHome();
  try {
    for (const [why, checkpoint] of Object.entries(DAMAGED)) {
      const session = Session.create(home, { cwd: "/damaged", ternVersion: "test" });
      const message = session.append(userMessage("hi"));
      session.close();
      await Deno.writeTextFile(
        session.path,
        JSON.stringify(compaction(checkpoint, message.id)) + "\n",
        { append: true },
      );
      const resumed = await Session.open(session.path);
      try {
        deepEqual(resumed.state().permissions, [], why);
        equal(resumed.state().plan, undefined, why);
      } finally {
        resumed.close();
      }
    }
  } finally {
    await cleanup();
  }
});

Deno.test("tern run -c after a checkpoint with a grant without paths runs its tool call", async () => {
  const ws = await tempWorkspace();
  const tmp = join(ws.home, "tmp");
  await Deno.mkdir(tmp);
  const script = (request: ModelRequest): ScriptedReply =>
    request.messages.at(-1)?.role === "tool" ? { text: "done" } : {
      toolCalls: [{ id: "call_ls", name: "bash", arguments: JSON.stringify({ command: "ls" }) }],
    };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const tern = (args: string[]) =>
    runTern(args, {
      cwd: ws.dir,
      env: {
        TMPDIR: tmp,
        TERN_HOME: ws.home,
        HOME: ws.home,
        TERN_API_KEY: "sk-test-checkpoint",
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted",
      },
      signal: AbortSignal.timeout(60_000),
    });
  try {
    const first = await tern(["run", "-o", "json", "--mode", "auto", "hello"]);
    equal(first.code, 0, first.stderr);
    const { sessionPath } = JSON.parse(first.stdout.trim().split("\n").at(-1)!);
    const leaf = JSON.parse((await Deno.readTextFile(sessionPath)).trim().split("\n").at(-1)!);
    await Deno.writeTextFile(
      sessionPath,
      JSON.stringify(compaction(DAMAGED["a grant without its paths"], leaf.id)) + "\n",
      { append: true },
    );
    // Before: "internal error: TypeError: Cannot read properties of undefined (reading 'read')".
    const run = await tern(["run", "-c", "--mode", "auto", "go"]);
    equal(run.code, 0, run.stderr);
    ok(!/internal error/.test(run.stderr), run.stderr);
    equal(server.requests.at(-1)!.modelRequest.messages.at(-1)!.role, "tool");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
