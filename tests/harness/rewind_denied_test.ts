/**
 * Checkpoints and rewind leave alone what the person's deny rules hide from every tool: no
 * snapshot reads it (top level, nested repositories, files stored before the rule), no record
 * names it, no rewind shows or restores it. Real files, real git, the real store, real rules
 * through the real config (`tern run`, `tern sessions rewind`) and the real `personDenials`.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import { readRecords, storeDir } from "../../src/harness/rewind/records.ts";
import type { PermissionRule } from "../../src/config/schema.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { checkpointedTurn, strictCheckpoints, temp } from "../support/host_tool.ts";
import { Session } from "../../src/session/session.ts";
import { loadSession } from "../../src/session/load.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const ENV_SECRET = "ENV-SECRET-5d0b71";
const KEY_SECRET = "KEY-SECRET-a93e2c";
const NESTED_SECRET = "NESTED-SECRET-77f1";
const RULES: PermissionRule[] = [
  { action: "deny", path: "**/.env" },
  { action: "deny", path: "secrets/**" },
];

function git(args: string[], cwd?: string): string {
  const out = new Deno.Command("git", {
    args,
    cwd,
    env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  }).outputSync();
  if (!out.success) throw new Error(`git ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/** Every object of the store at `gitDir`, content and all, as text. */
function storeObjects(gitDir: string): string {
  return git(["--git-dir", gitDir, "cat-file", "--batch-all-objects", "--batch"]);
}

/** The paths of tree `tree` of the store at `gitDir`. */
function treePaths(gitDir: string, tree: string): string[] {
  return git(["--git-dir", gitDir, "ls-tree", "-r", "--name-only", tree]).split("\n")
    .filter((line) => line !== "");
}

/** The workspace of these tests: two denied files, a nested repository with a third. */
function layOut(ws: string): void {
  Deno.writeTextFileSync(join(ws, ".env"), `TOKEN=${ENV_SECRET}\n`);
  Deno.mkdirSync(join(ws, "secrets"));
  Deno.writeTextFileSync(join(ws, "secrets", "key.txt"), `${KEY_SECRET}\n`);
  Deno.writeTextFileSync(join(ws, "a.txt"), "one\n");
  Deno.mkdirSync(join(ws, "sub"));
  git(["init", "--quiet"], join(ws, "sub"));
  Deno.writeTextFileSync(join(ws, "sub", ".env"), `TOKEN=${NESTED_SECRET}\n`);
  Deno.writeTextFileSync(join(ws, "sub", "code.txt"), "code\n");
}

Deno.test("TurnCheckpoints never stores the paths deny rules hide, in nested repositories too", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  try {
    layOut(ws);
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const checkpoints = strictCheckpoints(session, ws, () => RULES);
    const entry = await checkpointedTurn(session, checkpoints, () => {
      Deno.writeTextFileSync(join(ws, "a.txt"), "two\n");
      Deno.writeTextFileSync(join(ws, "sub", "code.txt"), "changed\n");
    });
    const gitDir = storeDir(join(session.path, ".."));
    const objects = storeObjects(gitDir);
    for (const secret of [ENV_SECRET, KEY_SECRET, NESTED_SECRET]) {
      equal(objects.includes(secret), false, `${secret} is in the store`);
    }
    const records = await readRecords(session.path);
    for (const record of records) {
      if (record.kind !== "before" && record.kind !== "after") continue;
      deepEqual(treePaths(gitDir, record.tree), ["a.txt", "sub/code.txt"]);
    }
    const after = records.find((record) => record.kind === "after");
    ok(after?.kind === "after");
    deepEqual(after.changes.map((c) => c.path), ["a.txt", "sub/code.txt"]);

    // The person changes their secrets after the turn: the rewind leaves them as they are.
    Deno.writeTextFileSync(join(ws, ".env"), "TOKEN=rotated\n");
    Deno.removeSync(join(ws, "secrets", "key.txt"));
    const options = { workspace: ws, scope: "files" as const, rules: RULES };
    const plan = await planRewind(session, entry, options);
    deepEqual(plan.changes.map((c) => c.path), ["a.txt", "sub/code.txt"]);
    const result = await applyRewind(session, plan, options);
    deepEqual(result.written, ["a.txt", "sub/code.txt"]);
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "one\n");
    equal(Deno.readTextFileSync(join(ws, ".env")), "TOKEN=rotated\n");
    equal(Deno.readDirSync(join(ws, "secrets")).toArray().length, 0);
    equal(storeObjects(gitDir).includes("rotated"), false);
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("TurnCheckpoints drops a file stored before the deny rule, and a rewind to then leaves it alone", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  try {
    layOut(ws);
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    let rules: PermissionRule[] = [];
    const checkpoints = strictCheckpoints(session, ws, () => rules);
    // Before the rule the secrets are checkpointed like any file.
    const first = await checkpointedTurn(session, checkpoints, () => {
      Deno.writeTextFileSync(join(ws, "a.txt"), "two\n");
    });
    const gitDir = storeDir(join(session.path, ".."));
    ok(storeObjects(gitDir).includes(ENV_SECRET));

    // The person adds the rules and rotates the secret between turns.
    rules = RULES;
    Deno.writeTextFileSync(join(ws, ".env"), "TOKEN=ROTATED-SECRET-0c4e\n");
    await checkpointedTurn(session, checkpoints, () => {
      Deno.writeTextFileSync(join(ws, "a.txt"), "three\n");
    });
    equal(storeObjects(gitDir).includes("ROTATED-SECRET-0c4e"), false);
    const records = await readRecords(session.path);
    // The second turn's: its checkpoint and its end.
    const [before, after] = records.filter((record) =>
      record.kind === "before" || record.kind === "after"
    ).slice(2);
    for (const record of [before, after]) {
      deepEqual(treePaths(gitDir, record.tree), ["a.txt", "sub/code.txt"]);
    }
    ok(after.kind === "after");
    deepEqual(after.changes.map((c) => c.path), ["a.txt"]);

    // The first checkpoint holds the old `.env`: neither shown nor brought back.
    const options = { workspace: ws, scope: "files" as const, rules: RULES };
    const plan = await planRewind(session, first, options);
    deepEqual(plan.changes.map((c) => c.path), ["a.txt"]);
    for (const secret of [ENV_SECRET, KEY_SECRET, "ROTATED-SECRET-0c4e"]) {
      equal(plan.patch.includes(secret), false, plan.patch);
    }
    await applyRewind(session, plan, options);
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "one\n");
    equal(Deno.readTextFileSync(join(ws, ".env")), "TOKEN=ROTATED-SECRET-0c4e\n");
    equal(Deno.readTextFileSync(join(ws, "secrets", "key.txt")), `${KEY_SECRET}\n`);
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});

testWith(
  [bwrapNeed],
  "tern run and tern sessions rewind never store, show or restore what deny rules hide",
  async () => {
    const ws = await tempWorkspace();
    const calls = [
      { name: "write", args: { path: "a.txt", content: "two\n" } },
      { name: "bash", args: { command: "printf made > b.txt" } },
    ];
    const server = await startScriptedServer(
      ((_request: ModelRequest, i: number) =>
        i < calls.length
          ? {
            toolCalls: [{
              id: `c${i}`,
              name: calls[i].name,
              arguments: JSON.stringify(calls[i].args),
            }],
          }
          : { text: "done" }) as unknown as ScriptedReply[],
      { chunkDelayMs: 0 },
    );
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test-x" };
    try {
      layOut(ws.dir);
      await Deno.writeTextFile(join(ws.home, "config.jsonc"), JSON.stringify({ rules: RULES }));
      const run = await runTern(
        ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"],
        { cwd: ws.dir, env },
      );
      equal(run.code, 0, run.stderr);
      equal(Deno.readTextFileSync(join(ws.dir, "b.txt")), "made");
      const folder = [...Deno.readDirSync(join(ws.home, "sessions"))][0].name;
      const gitDir = join(ws.home, "sessions", folder, "rewind.git");
      const objects = storeObjects(gitDir);
      ok(objects.includes("code\n"), "the store holds the workspace's other files");
      for (const secret of [ENV_SECRET, KEY_SECRET, NESTED_SECRET]) {
        equal(objects.includes(secret), false, `${secret} is in the store`);
      }
      const sessionFile = [...Deno.readDirSync(join(ws.home, "sessions", folder))]
        .find((entry) => entry.name.endsWith(".jsonl"))!.name;
      const recordsText = JSON.stringify(
        await readRecords(join(ws.home, "sessions", folder, sessionFile)),
      );
      ok(recordsText.includes("a.txt"), recordsText);
      equal(/\.env|secrets/.test(recordsText), false, recordsText);

      Deno.writeTextFileSync(join(ws.dir, ".env"), "TOKEN=rotated\n");
      const session = await loadSession(join(ws.home, "sessions", folder, sessionFile));
      const entry = session.entries.find((e) => e.type === "message" && e.message.role === "user")!
        .id;
      const rewind = await runTern(["sessions", "rewind", "-c", entry, "--yes"], {
        cwd: ws.dir,
        env,
      });
      equal(rewind.code, 0, rewind.stderr);
      equal(/SECRET|\.env|secrets/.test(rewind.stdout), false, rewind.stdout);
      equal(Deno.readTextFileSync(join(ws.dir, "a.txt")), "one\n");
      equal(Deno.readTextFileSync(join(ws.dir, ".env")), "TOKEN=rotated\n");
      equal(Deno.readTextFileSync(join(ws.dir, "secrets", "key.txt")), `${KEY_SECRET}\n`);
      equal(storeObjects(gitDir).includes("rotated"), false);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);

Deno.test("TurnCheckpoints never stores the file a hidden link leads to, and a rewind never shows it", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  try {
    // `.env` is a link to the file that holds the secret: the sandbox hides where it leads, and
    // so must the checkpoints (under the target's own path, which no rule names).
    Deno.mkdirSync(join(ws, "config"));
    Deno.writeTextFileSync(join(ws, "config", "prod.env"), `TOKEN=${ENV_SECRET}\n`);
    Deno.symlinkSync("config/prod.env", join(ws, ".env"));
    Deno.writeTextFileSync(join(ws, "a.txt"), "one\n");
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const checkpoints = strictCheckpoints(session, ws, () => RULES);
    const entry = await checkpointedTurn(session, checkpoints, () => {
      Deno.writeTextFileSync(join(ws, "a.txt"), "two\n");
      Deno.writeTextFileSync(join(ws, "config", "prod.env"), `TOKEN=${KEY_SECRET}\n`);
    });
    const gitDir = storeDir(join(session.path, ".."));
    const objects = storeObjects(gitDir);
    for (const secret of [ENV_SECRET, KEY_SECRET]) {
      equal(objects.includes(secret), false, `${secret} is in the store`);
    }
    const after = (await readRecords(session.path)).find((record) => record.kind === "after");
    ok(after?.kind === "after");
    deepEqual(after.changes.map((c) => c.path), ["a.txt"]);
    const plan = await planRewind(session, entry, { workspace: ws, scope: "files", rules: RULES });
    deepEqual(plan.changes.map((c) => c.path), ["a.txt"]);
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});
