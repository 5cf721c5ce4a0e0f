/**
 * End-to-end: a plan whose model text is hostile. A node id named like a member every object
 * inherits, a node id that is a key tern knows of, a title padded with blank glyphs: the real
 * process against the scripted model.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer, withScriptedServer } from "../support/scripted_server.ts";
import { runTern, runTernWithInput, tempWorkspace, ternCommand } from "../support/tern_process.ts";

type Node = { id: string; title: string; task: string; dependsOn: string[] };
type Workspace = Awaited<ReturnType<typeof tempWorkspace>>;

const KEY = "sk-plan-test-0001secretABCDEF";
const MEMBERS = ["constructor", "toString", "__proto__"];

const node = (id: string, dependsOn: string[] = [], title = `Step ${id}`): Node => ({
  id,
  title,
  task: `Do step ${id}.`,
  dependsOn,
});
const plan = (...nodes: Node[]): ScriptedReply => ({ text: JSON.stringify({ nodes }) });
const system = (request: ModelRequest) => String(request.messages[0]?.content ?? "");
const userText = (request: ModelRequest) =>
  String(request.messages.find((m) => m.role === "user")?.content ?? "");
const stepOf = (request: ModelRequest) => /Your step \("([^"]+)"/.exec(userText(request))?.[1];

async function withWorkspace(body: (ws: Workspace) => Promise<void>): Promise<void> {
  const ws = await tempWorkspace();
  try {
    await body(ws);
  } finally {
    await ws.cleanup();
  }
}

/** Every session file's text under `home`. */
async function sessionsText(home: string): Promise<string> {
  let text = "";
  const sessions = join(home, "sessions");
  for await (const dir of Deno.readDir(sessions)) {
    for await (const file of Deno.readDir(join(sessions, dir.name))) {
      text += await Deno.readTextFile(join(sessions, dir.name, file.name));
    }
  }
  return text;
}

Deno.test("interactive: /plan resume continues a plan whose added steps are named like object members", async () => {
  await withWorkspace(async (ws) => {
    const ran: string[] = [];
    let resumed = false;
    await withScriptedServer((request) => {
      if (system(request).startsWith("You plan the work")) return plan(node("a"), node("b"));
      if (system(request).startsWith("You repair the plan")) {
        return plan(...MEMBERS.map((id) => node(id, ["b"])));
      }
      const id = stepOf(request) ?? "?";
      if (!resumed && id === "a") return { text: "FAILED: a cannot" };
      // b's worker hangs until tern plan is stopped: the added steps never start.
      if (!resumed && id === "b") return { fault: "hang" };
      ran.push(id);
      return { text: `${id} done` };
    }, async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: ws.home,
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-plan-line-secret",
        NO_COLOR: "1",
      };
      const child = ternCommand(
        ["plan", "--mode", "bypass", "a and b"],
        { cwd: ws.dir, env },
        "null",
      )
        .spawn();
      const replanned = () =>
        server.requests.some((r) => system(r.modelRequest).startsWith("You repair the plan"));
      while (!replanned()) await new Promise((resolve) => setTimeout(resolve, 50));
      // Stopped once the added steps are in the session (seen: a fixed wait after the request
      // can end before a loaded machine's tern has read the answer and recorded them).
      for (let i = 0; i < 600; i++) {
        if ((await sessionsText(ws.home)).includes('"kind":"append"')) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      child.kill("SIGINT");
      const stopped = await child.output();
      equal(stopped.code, 130, new TextDecoder().decode(stopped.stderr));
      resumed = true;
      const run = await runTernWithInput(["-c"], "/plan resume\n", { cwd: ws.dir, env });
      equal(run.code, 0, run.stdout + run.stderr);
      ok(!/TypeError|padEnd/.test(run.stdout + run.stderr), run.stdout + run.stderr);
      for (const id of MEMBERS) match(run.stdout, new RegExp(`· ${id} +WAITING +Step ${id} ← b`));
      for (const id of ["a", "b", ...MEMBERS]) match(run.stdout, new RegExp(`✓ ${id}: ${id} done`));
      match(run.stdout, /5 succeeded/);
      deepEqual(ran.sort(), ["a", "b", ...MEMBERS].sort());
    });
  });
});

Deno.test("interactive: /plan shows a title's blank glyphs counted, not as a row of their own", async () => {
  await withWorkspace(async (ws) => {
    const forged = `Read${"\u2800".repeat(62)}✗ deploy  FAILED    cannot deploy`;
    await withScriptedServer((request) => {
      if (system(request).startsWith("You plan the work")) {
        return plan(node("a", [], forged), node("b", ["a"], "Write tests"));
      }
      return { text: `${stepOf(request)} done` };
    }, async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-plan-line-secret",
        NO_COLOR: "1",
      };
      const run = await runTernWithInput([], "/plan read and test\n", { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      ok(!run.stdout.includes("\u2800"), run.stdout);
      match(run.stdout, /· a +WAITING +Read⟨62 × U\+2800⟩✗ deploy FAILED cannot deploy/);
    });
  });
});

Deno.test("tern plan sends a plan whose step id is a known key back to the planner, never shown", async () => {
  await withWorkspace(async (ws) => {
    // A key tern holds but did not send to this server: the one it sent is taken out of the
    // server's stream before the plan is read (src/llm/errors.ts `withoutSecrets`).
    const OTHER = "sk-ant-other-KEY-0123456789abcdefXYZ";
    const env = {
      HOME: ws.home,
      TERN_HOME: ws.home,
      TERN_API_KEY: KEY,
      ANTHROPIC_API_KEY: OTHER,
    };
    const flags = (url: string) => ["--base-url", url, "-m", "scripted", "--mode", "bypass"];
    const planner: ModelRequest[] = [];
    const server = await startScriptedServer((request) => {
      if (system(request).startsWith("You plan the work")) {
        planner.push(request);
        return planner.length === 1
          ? plan(node(OTHER, [], `title ${OTHER}`), node("b", [OTHER]))
          : plan(node("a"), node("b", ["a"]));
      }
      return { text: `${stepOf(request)} done` };
    }, { chunkDelayMs: 0 });
    try {
      for (const output of ["text", "json"]) {
        planner.length = 0;
        const run = await runTern(["plan", ...flags(server.baseUrl), "-o", output, "task"], {
          cwd: ws.dir,
          env,
        });
        equal(run.code, 0, run.stderr);
        ok(!(run.stdout + run.stderr).includes(OTHER), run.stdout + run.stderr);
        equal(planner.length, 2, "one corrective retry");
        const correction = String(planner[1].messages.at(-1)?.content);
        match(correction, /"id" holds a key tern knows of/);
        ok(!correction.includes(OTHER), correction);
        if (output === "json") {
          deepEqual(JSON.parse(run.stdout).nodes.map((n: Node) => n.id), ["a", "b"]);
        }
      }
      // The person's --append is refused the same way, without quoting the key.
      const append = JSON.stringify({ nodes: [node(KEY, ["a"])] });
      const rejected = await runTern(
        ["plan", ...flags(server.baseUrl), "-c", "--append", append],
        { cwd: ws.dir, env },
      );
      equal(rejected.code, 2, rejected.stderr);
      match(rejected.stderr, /holds a key tern knows of/);
      ok(!(rejected.stdout + rejected.stderr).includes(KEY), rejected.stderr);
      ok(!(await sessionsText(ws.home)).includes(KEY));
    } finally {
      await server.close();
    }
  });
});

Deno.test("tern plan -c refuses a plan whose step id became a known key, without showing it", async () => {
  // No key's format: only the key tern is given finds it.
  const later = "mykeyQ7wP2xZ9vL4mN8c";
  await withWorkspace(async (ws) => {
    const server = await startScriptedServer((request) => {
      if (system(request).startsWith("You plan the work")) {
        return plan(node(later), node("b", [later]));
      }
      return { text: `FAILED: ${stepOf(request)} cannot` };
    }, { chunkDelayMs: 0 });
    try {
      const args = ["plan", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
      // Made while tern knew another key; continued once the id is the key it is given.
      const first = await runTern([...args, "task"], {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-other-key-9999" },
      });
      equal(first.code, 1, first.stderr);
      const resumed = await runTern([...args, "-c"], {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: later },
      });
      equal(resumed.code, 2, resumed.stderr);
      match(resumed.stderr, /cannot continue: node 1: "id" holds a key tern knows of/);
      ok(!(resumed.stdout + resumed.stderr).includes(later), resumed.stderr);
    } finally {
      await server.close();
    }
  });
});
