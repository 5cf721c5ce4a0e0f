/**
 * End-to-end: the real `tern` process with MCP servers from config files — a full agent turn
 * through an MCP tool against the scripted model, review of MCP calls, and `tern mcp`.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";
import { denoNpm, EVERYTHING, FILESYSTEM, referenceServersNeed } from "../mcp/_servers.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { httpServer } from "../mcp/_http_server.ts";
import { filesUnder } from "../support/files_under.ts";

const SECRET = "sk-test-SECRET-77aa01bc9d";
/** A token the MCP config gives a server: its echo in a tool result must be masked. */
const SERVER_TOKEN = "srvtok-93b1d0e4c2a7";

type Workspace = Awaited<ReturnType<typeof tempWorkspace>>;

/** A workspace whose user config (TERN_HOME/mcp.json) defines `servers`. */
async function withMcpWorkspace(
  servers: Record<string, unknown>,
  body: (ws: Workspace, env: Record<string, string>) => Promise<void>,
): Promise<void> {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.home, "mcp.json"), JSON.stringify({ servers }));
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: SECRET };
    await body(ws, env);
  } finally {
    await ws.cleanup();
  }
}

/**
 * server-everything run by Deno from its module cache. A stdio server gets only a minimal
 * environment, so the config passes what Deno needs to find its cache (HOME is the test's) and
 * the certificates to reach npm should the cache be cold.
 */
const everything = () => ({ ...denoNpm(EVERYTHING, "stdio"), env: denoEnv() });
const filesystem = (root: string) => ({ ...denoNpm(FILESYSTEM, root), env: denoEnv() });

/**
 * What a Deno-run server needs to start from the module cache: the real HOME and cache (the
 * test's HOME is a temporary folder, which a sandboxed server does not even see: /tmp is
 * private there).
 */
function denoEnv(): Record<string, string> {
  const home = Deno.env.get("HOME")!;
  const env: Record<string, string> = {
    HOME: home,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? join(home, ".cache", "deno"),
  };
  const certs = Deno.env.get("SSL_CERT_FILE");
  if (certs !== undefined) env.SSL_CERT_FILE = certs;
  return env;
}
const fault = (mode: "ok" | "exit") => faultServerCommand(mode);

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

testWith(
  [referenceServersNeed],
  "tern run: a full turn through an MCP tool of server-everything",
  async () => {
    const withToken = {
      ...everything(),
      env: { ...everything().env, SERVICE_TOKEN: SERVER_TOKEN },
    };
    await withMcpWorkspace({ everything: withToken }, async (ws, env) => {
      const server = await startScriptedServer([
        call("mcp__everything__echo", { message: "via mcp" }, "c1"),
        call("mcp__everything__get-env", {}, "c2"),
        { text: "The server echoed it." },
      ], { chunkDelayMs: 0 });
      try {
        const run = await runTern(
          ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", "echo it"],
          { cwd: ws.dir, env },
        );
        equal(run.code, 0, run.stderr);
        const result = JSON.parse(run.stdout);
        equal(result.exitReason, "COMPLETED");
        const first = server.requests[0].modelRequest;
        const names = (first.tools ?? []).map((tool) => tool.name);
        ok(names.includes("mcp__everything__echo"), names.join(", "));
        ok(names.includes("read"), "the built-in tools are still there");
        const messages = server.requests[2].modelRequest.messages;
        const results = messages.filter((m) => m.role === "tool").map((m) => m.content);
        match(String(results[0]), /SUCCEEDED\nEcho: via mcp/);
        // The server's own environment holds no API key; the token its config gave it is masked.
        ok(!String(results[1]).includes(SECRET), "the API key reached the MCP server");
        ok(!String(results[1]).includes("TERN_API_KEY"));
        match(String(results[1]), /SERVICE_TOKEN/);
        ok(!String(results[1]).includes(SERVER_TOKEN), "the server's token reached the model");
        ok(!run.stdout.includes(SERVER_TOKEN) && !run.stderr.includes(SERVER_TOKEN));
      } finally {
        await server.close();
      }
    });
  },
);

Deno.test("tern run: an MCP tool not marked read-only needs approval, and deny rules apply", async () => {
  await withMcpWorkspace({ fault: fault("ok") }, async (ws, env) => {
    await Deno.mkdir(join(ws.home), { recursive: true });
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({
        rules: [{ action: "deny", tool: "mcp__fault__f*", reason: "no failing here" }],
      }),
    );
    const server = await startScriptedServer([
      {
        toolCalls: [
          { id: "c1", name: "mcp__fault__slow", arguments: '{"ms":1}' },
          { id: "c2", name: "mcp__fault__fail", arguments: "{}" },
          { id: "c3", name: "mcp__fault__echo", arguments: '{"message":"ok"}' },
        ],
      },
      { text: "done" },
    ], { chunkDelayMs: 0 });
    try {
      const run = await runTern(
        ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", "try them"],
        { cwd: ws.dir, env },
      );
      equal(run.code, 0, run.stderr);
      const messages = server.requests[1].modelRequest.messages;
      const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      // ASK with nobody to ask: denied, saying why.
      match(results[0], /POLICY_DENIED.*MCP tool its server does not mark read-only/s);
      match(results[1], /POLICY_DENIED.*no failing here/s);
      match(results[2], /SUCCEEDED\necho: ok/);
    } finally {
      await server.close();
    }
  });
});

testWith(
  [referenceServersNeed],
  "tern mcp list, tools and call against configured servers",
  async () => {
    await withMcpWorkspace(
      { everything: everything(), broken: fault("exit") },
      async (ws, env) => {
        const list = await runTern(["mcp", "list"], { cwd: ws.dir, env });
        equal(list.code, 0, list.stderr);
        match(list.stdout, /^broken\s+FAILED\s+stdio/m);
        match(list.stdout, /fatal: cannot start/);
        match(list.stdout, /^everything\s+READY\s+stdio\s+1\d tools/m);

        const json = await runTern(["mcp", "list", "--json"], { cwd: ws.dir, env });
        const states = JSON.parse(json.stdout).map((s: { name: string; state: string }) => [
          s.name,
          s.state,
        ]);
        deepEqual(states, [["broken", "FAILED"], ["everything", "READY"]]);

        const tools = await runTern(["mcp", "tools", "everything"], { cwd: ws.dir, env });
        equal(tools.code, 0, tools.stderr);
        match(tools.stdout, /^mcp__everything__echo {2}\(echo, read-only\)$/m);

        const echo = await runTern(
          ["mcp", "call", "everything", "echo", '{"message":"from the cli"}'],
          { cwd: ws.dir, env },
        );
        equal(echo.code, 0, echo.stderr);
        equal(echo.stdout, "Echo: from the cli\n");

        const invalid = await runTern(["mcp", "call", "everything", "echo", "{nope"], {
          cwd: ws.dir,
          env,
        });
        equal(invalid.code, 2);
        match(invalid.stderr, /Invalid arguments for "echo": not JSON/);

        const unknown = await runTern(["mcp", "call", "everything", "nope", "{}"], {
          cwd: ws.dir,
          env,
        });
        equal(unknown.code, 2);
        match(unknown.stderr, /has no tool "nope" \(its tools: .*"echo"/);

        const wrongArgs = await runTern(["mcp", "call", "everything", "echo", '{"message":1}'], {
          cwd: ws.dir,
          env,
        });
        equal(wrongArgs.code, 1);
        match(wrongArgs.stderr, /ERROR\[INVALID_ARGUMENTS\]/);
      },
    );
  },
);

Deno.test("project MCP servers start only once trusted, and a changed one needs trust again", async () => {
  await withMcpWorkspace({}, async (ws, env) => {
    const project = (message: string) =>
      Deno.writeTextFile(
        join(ws.dir, ".mcp.json"),
        JSON.stringify({
          mcpServers: {
            proj: { ...faultServerCommand("ok", { workspace: ws.dir }), env: { NOTE: message } },
          },
        }),
      );
    await project("one");
    const before = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    match(before.stdout, /^proj\s+UNTRUSTED/m);
    match(before.stdout, /tern mcp trust proj/);
    const call = await runTern(["mcp", "call", "proj", "echo", '{"message":"x"}'], {
      cwd: ws.dir,
      env,
    });
    equal(call.code, 2);
    match(call.stderr, /not trusted yet/);

    // Trust is given by name, after seeing what the server runs (and which env it gets).
    const unnamed = await runTern(["mcp", "trust"], { cwd: ws.dir, env });
    equal(unnamed.code, 0, unnamed.stderr);
    match(unnamed.stdout, /Name the servers to trust[\s\S]*proj: .*fault_server\.ts ok .*env NOTE/);
    const trust = await runTern(["mcp", "trust", "proj"], { cwd: ws.dir, env });
    equal(trust.code, 0, trust.stderr);
    match(trust.stdout, /^Trusted proj: .*fault_server\.ts ok/m);
    const after = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    match(after.stdout, /^proj\s+READY/m);

    await project("two");
    const changed = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    match(changed.stdout, /^proj\s+UNTRUSTED/m);
  });
});

Deno.test("a bad MCP server entry is skipped, naming the file, key and server", async () => {
  await withMcpWorkspace({ bad: { command: "x", comand: "typo" } }, async (ws, env) => {
    const list = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    equal(list.code, 0, list.stderr);
    match(
      list.stderr,
      new RegExp(
        `${join(ws.home, "mcp.json")}.*servers\\.bad\\.comand.* — server "bad" is not used`,
      ),
    );
  });
});

testWith(
  [referenceServersNeed, bwrapNeed],
  "a stdio server with sandbox: true runs in bubblewrap: it writes only the workspace",
  async () => {
    await withMcpWorkspace({}, async (ws, env) => {
      const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-outside-" }));
      try {
        const { command, args, env: serverEnv } = filesystem("/");
        await Deno.writeTextFile(
          join(ws.home, "mcp.json"),
          JSON.stringify({ servers: { fs: { command, args, env: serverEnv, sandbox: true } } }),
        );
        const write = (path: string) =>
          runTern(
            ["mcp", "call", "fs", "write_file", JSON.stringify({ path, content: "x" })],
            { cwd: ws.dir, env },
          );
        const inside = await write(join(ws.dir, "inside.txt"));
        equal(inside.code, 0, inside.stderr);
        equal(await Deno.readTextFile(join(ws.dir, "inside.txt")), "x");
        const denied = await write(join(outside, "outside.txt"));
        equal(denied.code, 1);
        match(denied.stderr, /reported an error/);
        deepEqual([...Deno.readDirSync(outside)], [], "nothing was written outside the workspace");
      } finally {
        await Deno.remove(outside, { recursive: true });
      }
    });
  },
);

Deno.test("tern run: a server's tools/list_changed reaches the model's next requests", async () => {
  await withMcpWorkspace({ fault: fault("ok") }, async (ws, env) => {
    const server = await startScriptedServer([
      call("mcp__fault__change", {}, "c1"),
      // Time for the client to refetch the list (the SDK debounces the notification).
      call("mcp__fault__slow", { ms: 1500 }, "c2"),
      call("mcp__fault__added", {}, "c3"),
      { text: "done" },
    ], { chunkDelayMs: 0 });
    try {
      const run = await runTern(
        scriptedRunArgs(server.baseUrl, "go"),
        { cwd: ws.dir, env },
      );
      equal(run.code, 0, run.stderr);
      const tools = (i: number) => (server.requests[i].modelRequest.tools ?? []).map((t) => t.name);
      ok(!tools(0).includes("mcp__fault__added"));
      ok(tools(2).includes("mcp__fault__added"), tools(2).join(", "));
      const results = server.requests[3].modelRequest.messages.filter((m) => m.role === "tool");
      match(String(results[2].content), /^SUCCEEDED/);
    } finally {
      await server.close();
    }
  });
});

Deno.test("tern run carries on without MCP when the project's MCP config is broken", async () => {
  await withMcpWorkspace({}, async (ws, env) => {
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { gh: { command: "x", env: { T: "${NOT_SET_TOKEN}" } } } }),
    );
    const server = await startScriptedServer([{ text: "fine" }], { chunkDelayMs: 0 });
    try {
      const run = await runTern(
        ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", "hi"],
        { cwd: ws.dir, env },
      );
      equal(run.code, 0, run.stderr);
      equal(JSON.parse(run.stdout).text, "fine");
      match(run.stderr, /warning: .*NOT_SET_TOKEN.* — server "gh" is not used/);
    } finally {
      await server.close();
    }
  });
});

Deno.test("tern mcp tools and mcp list show a server's line breaks and invisible characters: they forge no entry", async () => {
  const servers = { evil: faultServerCommand("forged"), broken: faultServerCommand("init-error") };
  await withMcpWorkspace(servers, async (ws, env) => {
    const tools = await runTern(["mcp", "tools", "evil"], { cwd: ws.dir, env });
    equal(tools.code, 0, tools.stderr);
    const lines = tools.stdout.trimEnd().split("\n");
    // One tool: its entry line and its summary line, nothing more.
    equal(lines.length, 2, tools.stdout);
    match(lines[0], /\(x↵ {2}mcp__evil__safe {2}\(safe, read-only\), may change things\)$/);
    equal(lines[1], "  first ⟨U+E0049⟩");
    ok(!tools.stdout.includes("mcp__fake__forged"), tools.stdout);
    const listed = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    const rows = listed.stdout.split("\n").filter((line) => line.startsWith("github"));
    deepEqual(rows, [], listed.stdout);
    match(listed.stdout, /boom↵github {2}READY/);
  });
});

Deno.test("tern run masks a token the MCP config gives a server wherever the model writes it: session, events, arguments", async () => {
  const servers = { fault: { ...fault("ok"), env: { SERVICE_TOKEN: SERVER_TOKEN } } };
  await withMcpWorkspace(servers, async (ws, env) => {
    const server = await startScriptedServer([
      {
        text: `the token is ${SERVER_TOKEN}`,
        toolCalls: [
          {
            id: "c1",
            name: "bash",
            arguments: JSON.stringify({ command: `echo ${SERVER_TOKEN}` }),
          },
          {
            id: "c2",
            name: "mcp__fault__echo",
            arguments: JSON.stringify({ message: SERVER_TOKEN }),
          },
        ],
      },
      { text: `done, still ${SERVER_TOKEN}` },
    ], { chunkDelayMs: 0 });
    try {
      const run = await runTern(
        ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", "say it"],
        { cwd: ws.dir, env },
      );
      equal(run.code, 0, run.stderr);
      ok(server.requests.length >= 2, run.stderr);
      ok(!run.stdout.includes(SERVER_TOKEN), `the events hold the token:\n${run.stdout}`);
      ok(!run.stderr.includes(SERVER_TOKEN), run.stderr);
      // Every file tern keeps under its home: the session, its records, the audit log.
      let files = 0;
      for (const path of await filesUnder(ws.home)) {
        if (path.endsWith("mcp.json")) continue;
        files++;
        const text = new TextDecoder().decode(await Deno.readFile(path));
        ok(!text.includes(SERVER_TOKEN), `${path} holds the token`);
      }
      ok(files > 0, "tern kept no files");
      match(run.stdout, /\[REDACTED/);
    } finally {
      await server.close();
    }
  });
});

Deno.test("tern run exits when an HTTP MCP server holds its GET stream open", async () => {
  const mcp = httpServer("idle");
  const model = await startScriptedServer([{ text: "done" }], { chunkDelayMs: 0 });
  try {
    await withMcpWorkspace({ w: { type: "http", url: mcp.url } }, async (ws, env) => {
      const run = await runTern(scriptedRunArgs(model.baseUrl, "go"), {
        cwd: ws.dir,
        env,
        signal: AbortSignal.timeout(30_000),
      });
      equal(run.code, 0, run.stderr);
      match(run.stdout, /done/);
      ok(mcp.getStreams.length >= 1, "the server's GET stream was never opened");
    });
  } finally {
    await model.close();
    await mcp.close();
  }
});

Deno.test("tern mcp list --json without servers prints an empty list, the note on stderr", async () => {
  await withMcpWorkspace({}, async (ws, env) => {
    const json = await runTern(["mcp", "list", "--json"], { cwd: ws.dir, env });
    equal(json.code, 0, json.stderr);
    deepEqual(JSON.parse(json.stdout), []);
    match(json.stderr, /no MCP servers are configured/);
    const text = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    equal(text.stdout, "");
  });
});
