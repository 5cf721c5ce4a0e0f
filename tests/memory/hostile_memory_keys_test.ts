/**
 * A fact never keeps a key: `tern memory save` refuses text holding the key tern holds or a
 * known key format (exit 2, nothing written, the key not quoted), and a fact that an older tern
 * saved with a key is listed masked, shown masked by `tern context` and sent masked to the model.
 */
import { equal, match, ok } from "node:assert/strict";
import { projectFactsPath, userFactsPath } from "../../src/memory/facts.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { startScriptedServer } from "../support/scripted_server.ts";

const KEY = "sk-test-memkeys-Q7rT2vX9pL4mN8bK";
const TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

async function textOrEmpty(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return "";
  }
}

Deno.test("tern memory save refuses a fact that holds a key and stores nothing", async () => {
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY };
  const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
  try {
    for (
      const args of [
        ["memory", "save", `the deploy key is ${KEY}`],
        ["memory", "save", "--global", `use token ${TOKEN} for the registry`],
        ["memory", "save", "--json", `staging password=Hunter2Hunter2!`],
      ]
    ) {
      const saved = await tern(args);
      equal(saved.code, 2, saved.stderr);
      match(saved.stderr, /Cannot remember a fact that holds a key/);
      const said = saved.stdout + saved.stderr;
      ok(!said.includes(KEY) && !said.includes(TOKEN) && !said.includes("Hunter2"), said);
    }
    const stored = await textOrEmpty(projectFactsPath(ws.home, ws.dir)) +
      await textOrEmpty(userFactsPath(ws.home));
    equal(stored, "");
    const plain = await tern(["memory", "save", "Deploys go through the registry"]);
    equal(plain.code, 0, plain.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern memory list masks a key in a fact saved before", async () => {
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY };
  const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
  try {
    const path = projectFactsPath(ws.home, ws.dir);
    await Deno.mkdir(`${ws.home}/memory/projects`, { recursive: true });
    const created = "2026-01-01T00:00:00.000Z";
    await Deno.writeTextFile(
      path,
      [
        { id: "0000000a", text: `deploy with ${KEY}`, scope: "project", created },
        { id: "0000000b", text: `registry token ${TOKEN}`, scope: "project", created },
      ].map((fact) => JSON.stringify(fact) + "\n").join(""),
    );
    for (const args of [["memory", "list"], ["memory", "list", "--json"]]) {
      const listed = await tern(args);
      equal(listed.code, 0, listed.stderr);
      ok(!listed.stdout.includes(KEY) && !listed.stdout.includes(TOKEN), listed.stdout);
      match(listed.stdout, /deploy with \[REDACTED\]/);
    }
    const forgot = await tern(["memory", "forget", "0000000b"]);
    equal(forgot.code, 0, forgot.stderr);
    ok(!forgot.stdout.includes(TOKEN), forgot.stdout);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("a fact saved with a key before reaches the model and tern context masked", async () => {
  const server = await startScriptedServer(() => ({ text: "noted" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const env = {
    TERN_HOME: ws.home,
    HOME: ws.home,
    TERN_API_KEY: KEY,
    TERN_BASE_URL: server.baseUrl,
    TERN_MODEL: "scripted",
  };
  const tern = (args: string[]) => runTern(args, { cwd: ws.dir, env });
  try {
    await Deno.mkdir(`${ws.home}/memory/projects`, { recursive: true });
    const created = "2026-01-01T00:00:00.000Z";
    await Deno.writeTextFile(
      projectFactsPath(ws.home, ws.dir),
      JSON.stringify({ id: "0000000a", text: `deploy with ${KEY}`, scope: "project", created }) +
        "\n",
    );
    await Deno.writeTextFile(
      userFactsPath(ws.home),
      JSON.stringify({ id: "0000000b", text: `registry token ${TOKEN}`, scope: "user", created }) +
        "\n",
    );
    const run = await tern(["run", "How do we deploy with the registry?"]);
    equal(run.code, 0, run.stderr);
    const sent = JSON.stringify(server.requests.map((request) => request.body));
    match(sent, /deploy with \[REDACTED\]/);
    ok(!sent.includes(KEY) && !sent.includes(TOKEN), "a key was sent");
    const context = await tern(["context", "How do we deploy with the registry?"]);
    equal(context.code, 0, context.stderr);
    match(context.stdout, /deploy with \[REDACTED\]/);
    ok(!context.stdout.includes(KEY) && !context.stdout.includes(TOKEN), context.stdout);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
