/**
 * A model server a repository's files chose (`baseUrl` in `.tern/config.jsonc` or
 * `TERN_BASE_URL` in its `.env`) gets nothing of the person's own from tern's home: neither
 * their context and prompt files, skills and `memory.md`, nor their facts for every workspace,
 * nor (through a subagent) their keys. The real `tern` against the scripted model server; the
 * same files reach a server the person chose.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { type ScriptedServer, startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, firstUser } from "../subagents/_helpers.ts";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";

/** What the person keeps in `~/.tern`, each file with a marker of its own. */
const PERSONAL = {
  "AGENTS.md": "Personal note PERSON-CONTEXT-7731",
  "APPEND_SYSTEM.md": "Personal addition PERSON-APPEND-5520",
  "SYSTEM.md": "Personal instructions PERSON-SYSTEM-3318",
  "memory.md": "Personal memory PERSON-MEMORYMD-6107",
  "skills/notes/SKILL.md": "---\nname: notes\ndescription: PERSON-SKILL-9024 notes\n---\nBody\n",
};
const GLOBAL_FACT = "staging password hint PERSON-FACT-4412";
const WORKSPACE_FACT = "staging password rotates PROJECT-FACT-2291";
/** Shares words with both facts, so both are chosen when they may go. */
const TASK = "where is the staging password hint";
const MARKERS = [
  "PERSON-CONTEXT-7731",
  "PERSON-APPEND-5520",
  "PERSON-SYSTEM-3318",
  "PERSON-MEMORYMD-6107",
  "PERSON-SKILL-9024",
  "PERSON-FACT-4412",
];

interface Scene {
  dir: string;
  server: ScriptedServer;
  env: Record<string, string>;
}

async function withScene(
  script: (request: ModelRequest) => { text: string } | ReturnType<typeof call>,
  fn: (scene: Scene) => Promise<void>,
): Promise<void> {
  const ws = await tempWorkspace();
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  try {
    const ternHome = join(ws.home, ".tern");
    for (const [path, text] of Object.entries(PERSONAL)) write(ternHome, path, text);
    const env = { HOME: ws.home };
    // The facts as the person saves them.
    for (const args of [["--global", GLOBAL_FACT], [WORKSPACE_FACT]]) {
      const saved = await runTern(["memory", "save", ...args], { cwd: ws.dir, env });
      equal(saved.code, 0, saved.stderr);
    }
    await fn({ dir: ws.dir, server, env });
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

function write(dir: string, path: string, text: string): string {
  const file = join(dir, path);
  Deno.mkdirSync(join(file, ".."), { recursive: true });
  Deno.writeTextFileSync(file, text);
  return file;
}

/** Every header and body the server received from `from` on, as one text. */
function received(server: ScriptedServer, from = 0): string {
  return JSON.stringify(server.requests.slice(from).map((r) => ({ h: r.headers, b: r.body })));
}

Deno.test("a model server a project's files chose gets none of the person's context files, skills, memory.md or facts for every workspace", async () => {
  await withScene(() => ({ text: "done" }), async (scene) => {
    const { dir, server, env } = scene;
    for (
      const [file, text] of [
        [".tern/config.jsonc", JSON.stringify({ baseUrl: server.baseUrl })],
        [".env", `TERN_BASE_URL=${server.baseUrl}\n`],
      ]
    ) {
      await Deno.remove(join(dir, ".tern", "config.jsonc")).catch(() => {});
      await Deno.remove(join(dir, ".env")).catch(() => {});
      const chooser = write(dir, file, text);
      const from = server.requests.length;
      const run = await runTern(["run", "-m", "scripted", "-o", "json", TASK], { cwd: dir, env });
      equal(run.code, 0, run.stderr);
      equal(server.requests.length, from + 1);
      const seen = received(server, from);
      for (const marker of MARKERS) ok(!seen.includes(marker), `${file}: "${marker}" was sent`);
      // The workspace's own fact, and the workspace's files, still go.
      ok(seen.includes("PROJECT-FACT-2291"), seen);
      // The person is told where the conversation goes, who chose it and what stays home.
      ok(run.stderr.includes(`the model's server is ${server.baseUrl}`), run.stderr);
      ok(run.stderr.includes(chooser), run.stderr);
      ok(run.stderr.includes("but not your own context and prompt files, skills"), run.stderr);
      // `tern context` shows the system prompt as that server gets it.
      const shown = await runTern(["context", TASK], { cwd: dir, env });
      equal(shown.code, 0, shown.stderr);
      for (const marker of ["AGENTS.md", "PERSON-FACT-4412", "skills index"]) {
        ok(!shown.stdout.includes(marker), `tern context shows "${marker}":\n${shown.stdout}`);
      }
    }
    // A server the person chose gets every one of them, as before.
    await Deno.remove(join(dir, ".env"));
    const from = server.requests.length;
    const own = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", TASK],
      { cwd: dir, env },
    );
    equal(own.code, 0, own.stderr);
    const seen = received(server, from);
    for (const marker of [...MARKERS, "PROJECT-FACT-2291"]) {
      ok(seen.includes(marker), `"${marker}" did not reach the person's own server`);
    }
    ok(!own.stderr.includes("the model's server is"), own.stderr);
  });
});

Deno.test("a subagent of a session whose model server a project's files chose gets neither the person's keys nor their context", async () => {
  const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
  const script = (request: ModelRequest) => {
    if (isChild(request)) return { text: "child done" };
    const text = allText(request);
    // The server is the repository's: its model asks for a child at once.
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "look", message: "CHILD look" }, "s1");
    }
    if (!text.includes("child done")) return call("wait_agent", {}, "w1");
    return { text: "parent done" };
  };
  await withScene(script, async ({ dir, server, env }) => {
    const secret = "sk-person-SECRET-5c1e09b7a2";
    write(dir, ".tern/config.jsonc", JSON.stringify({ baseUrl: server.baseUrl }));
    const run = await runTern(["run", "-m", "scripted", "--mode", "bypass", TASK], {
      cwd: dir,
      env: { ...env, TERN_API_KEY: secret, OPENAI_API_KEY: `${secret}-2` },
    });
    equal(run.code, 0, run.stderr);
    equal(server.requests.filter((request) => isChild(request.modelRequest)).length, 1);
    const seen = received(server);
    ok(!seen.includes(secret), "a request carried the person's key");
    for (const marker of MARKERS) ok(!seen.includes(marker), `"${marker}" was sent`);
  });
});

Deno.test("tern plan's planner gets none of the person's context files from a model server a project's files chose", async () => {
  const script = (request: ModelRequest) => {
    const system = String(request.messages[0]?.content ?? "");
    if (!system.startsWith("You plan the work")) return { text: "a done" };
    const nodes = [{ id: "a", title: "Step a", task: "Do step a.", dependsOn: [] }];
    return { text: JSON.stringify({ nodes }) };
  };
  await withScene(script, async ({ dir, server, env }) => {
    const planner = () =>
      server.requests.filter((r) =>
        String(r.modelRequest.messages[0]?.content).startsWith("You plan the work")
      );
    write(dir, ".tern/config.jsonc", JSON.stringify({ baseUrl: server.baseUrl }));
    const run = await runTern(["plan", "-m", "scripted", "--mode", "bypass", TASK], {
      cwd: dir,
      env,
    });
    equal(run.code, 0, run.stderr);
    equal(planner().length, 1);
    const seen = received(server);
    for (const marker of MARKERS) ok(!seen.includes(marker), `"${marker}" was sent`);
    // The person's own server: their context file reaches the planner.
    await Deno.remove(join(dir, ".tern", "config.jsonc"));
    const own = await runTern(
      ["plan", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", TASK],
      { cwd: dir, env },
    );
    equal(own.code, 0, own.stderr);
    ok(JSON.stringify(planner().at(-1)?.body).includes("PERSON-CONTEXT-7731"));
  });
});

Deno.test("a model server a project's files chose is offered none of the person's own MCP servers", async () => {
  await withScene(() => ({ text: "done" }), async ({ dir, server, env }) => {
    const own = faultServerCommand("ok");
    write(join(env.HOME, ".tern"), "mcp.json", JSON.stringify({ servers: { own } }));
    const offered = (from: number) =>
      server.requests.slice(from).flatMap((r) => (r.modelRequest.tools ?? []).map((t) => t.name));
    // The person's own server: its tools are offered.
    let from = server.requests.length;
    const mine = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", TASK],
      { cwd: dir, env },
    );
    equal(mine.code, 0, mine.stderr);
    ok(offered(from).includes("mcp__own__echo"), offered(from).join(", "));
    // The repository's server: not one of them, and the person is told.
    write(dir, ".tern/config.jsonc", JSON.stringify({ baseUrl: server.baseUrl }));
    from = server.requests.length;
    const theirs = await runTern(["run", "-m", "scripted", "-o", "json", TASK], { cwd: dir, env });
    equal(theirs.code, 0, theirs.stderr);
    ok(offered(from).length > 0);
    ok(!offered(from).some((name) => name.startsWith("mcp__")), offered(from).join(", "));
    ok(theirs.stderr.includes("or MCP servers"), theirs.stderr);
  });
});
